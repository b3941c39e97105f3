/**
 * Values derived from an object that never changes (a frozen one), remembered per object and key.
 * Held weakly: when the object is dropped, what was derived from it goes too. At most
 * `maxPerObject` keys are kept per object (when full, that object's memory starts over), so a
 * caller varying the key (a Host header, say) cannot make it grow without bound.
 */
export class PerObjectMemo<O extends object, V> {
  private readonly known = new WeakMap<O, Map<string, V>>();

  constructor(private readonly maxPerObject: number) {}

  get(owner: O, key: string, derive: () => V): V {
    let values = this.known.get(owner);
    const hit = values?.get(key);
    if (hit !== undefined) return hit;
    const value = derive();
    if (!values) {
      values = new Map();
      this.known.set(owner, values);
    } else if (values.size >= this.maxPerObject) {
      values.clear();
    }
    values.set(key, value);
    return value;
  }
}

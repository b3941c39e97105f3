/**
 * Answers of a pure function of a short string, remembered: for values clients send again and
 * again (a Content-Type; never a secret, which would then stay in memory). At most `maxEntries` are kept (when full, the
 * memory starts over) and keys longer than `maxKeyLength` are computed each time rather than kept,
 * so no caller can make it grow without bound. Remembered answers are shared: callers read them,
 * never change them.
 */
export class BoundedMemo<V> {
  private readonly known = new Map<string, V>();

  constructor(
    private readonly compute: (key: string) => V,
    private readonly maxEntries: number,
    private readonly maxKeyLength: number,
  ) {}

  get(key: string): V {
    const known = this.known.get(key);
    if (known !== undefined || this.known.has(key)) return known as V;
    const value = this.compute(key);
    if (key.length <= this.maxKeyLength) {
      if (this.known.size >= this.maxEntries) this.known.clear();
      this.known.set(key, value);
    }
    return value;
  }
}

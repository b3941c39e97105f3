/**
 * Repeating background work, injectable: `repeat(ms, task)` calls `task` every `ms` milliseconds
 * until the returned stop function is called. The service passes `unrefRepeat`; tests pass one
 * they fire themselves (test/helpers/manual-repeat.ts), so no test races a real timer.
 */
export type Repeat = (ms: number, task: () => void) => () => void;

/** Node's setInterval, which never keeps the process alive (whoever stops the work writes its last state). */
export const unrefRepeat: Repeat = (ms, task) => {
  const timer = setInterval(task, ms);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
};

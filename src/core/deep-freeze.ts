/**
 * Freezes `value` and everything reachable from it through own enumerable properties. It walks
 * with a stack instead of recursion, so a deeply nested value (a hostile JSON payload, say) cannot
 * overflow the call stack. An object `skip` accepts is left writable, with everything it holds
 * (a library's objects that must stay so); an object already frozen is taken as frozen through.
 */
export function deepFreeze<T>(value: T, skip?: (x: object) => boolean): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null || Object.isFrozen(x)) continue;
    if (skip?.(x) === true) continue;
    Object.freeze(x);
    for (const v of Object.values(x)) stack.push(v);
  }
  return value;
}

/** A JSON value as `JSON.parse` returns it. */
export type JsonPrimitive = string | number | boolean | null
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject
export interface JsonObject {
  [key: string]: JsonValue
}

type NonJsonLeaf =
  | bigint
  | symbol
  | ((...args: never[]) => unknown)
  | Date
  | RegExp
  | Map<unknown, unknown>
  | Set<unknown>
  | WeakMap<object, unknown>
  | WeakSet<object>
  | Promise<unknown>
  | ArrayBufferLike
  | ArrayBufferView

type IsAny<T> = 0 extends 1 & T ? true : false

/**
 * `true` when every value of type `T` can go through `JSON.stringify` and come back
 * equal: no `Date`, `Map`, `Set`, functions, `bigint`, class instances with methods,
 * and no `undefined` inside arrays. `undefined` in object properties is allowed
 * (JSON drops it). Used to make non-JSON step values a compile-time error.
 */
export type IsJson<T> =
  IsAny<T> extends true
    ? true
    : unknown extends T
      ? true
      : [T] extends [never]
        ? true
        : [T] extends [JsonValue | undefined | void]
          ? true
          : JsonCheck<T, []> extends true
            ? true
            : false

/** Deep enough for real step values; deeper structure is left to the run-time check (and keeps recursive types finite). */
type MaxDepth = [0, 0, 0, 0, 0, 0, 0, 0]

type JsonCheck<T, D extends unknown[]> = D['length'] extends MaxDepth['length']
  ? true
  : T extends string | number | boolean | null | undefined | void
    ? true
    : T extends NonJsonLeaf
      ? false
      : T extends readonly unknown[]
        ? undefined extends T[number]
          ? false
          : AllTrue<{ [K in keyof T]: JsonCheck<T[K], [...D, 0]> }[number]>
        : T extends object
          ? AllTrue<{ [K in keyof T]-?: K extends symbol ? true : JsonCheck<T[K], [...D, 0]> }[keyof T]>
          : false

type AllTrue<U> = [U] extends [true] ? true : [U] extends [never] ? true : false

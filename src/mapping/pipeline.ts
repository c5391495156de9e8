/**
 * A compiled mapping: everything resolved at load, so a request only runs
 * prepared closures. Filled in by the mapping engine (compile.ts).
 */
export interface Pipeline {
  readonly id: string;
}

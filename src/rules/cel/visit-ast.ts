/** A node of a parsed CEL expression (cel-js 8): its operator and its arguments. */
export type AstNode = { readonly op: string; readonly args: unknown };

export function isAstNode(x: unknown): x is AstNode {
  return typeof x === 'object' && x !== null && typeof (x as AstNode).op === 'string';
}

/**
 * Calls `fn` on every node of a parsed expression, parents first. `N` is the shape the caller
 * reads of the library's nodes (cel-js gives them all the same class).
 */
export function visitAst<N extends AstNode = AstNode>(
  node: unknown,
  fn: (node: N) => void,
  depth = 0,
): void {
  if (depth > 500) return;
  if (Array.isArray(node)) {
    for (const x of node) visitAst(x, fn, depth + 1);
  } else if (isAstNode(node)) {
    fn(node as N);
    visitAst(node.args, fn, depth + 1);
  }
}

/** Minimal ANSI styling; every function is the identity when colour is off. */
export interface Style {
  red: (s: string) => string;
  yellow: (s: string) => string;
  cyan: (s: string) => string;
  green: (s: string) => string;
  dim: (s: string) => string;
  bold: (s: string) => string;
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
const plain = (s: string) => s;

export function style(color: boolean): Style {
  if (!color) return { red: plain, yellow: plain, cyan: plain, green: plain, dim: plain, bold: plain };
  return { red: wrap(31, 39), yellow: wrap(33, 39), cyan: wrap(36, 39), green: wrap(32, 39), dim: wrap(2, 22), bold: wrap(1, 22) };
}

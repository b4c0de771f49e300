/** `k6/encoding` (harness implementation, see register.ts). */
export function b64encode(input: string): string {
  return Buffer.from(input, 'utf8').toString('base64');
}

export default { b64encode };

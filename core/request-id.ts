// X-Request-ID as SPEC.md's Errors section defines it: a sent value of 1 to 128 visible ASCII
// characters (no spaces) is echoed; any other value, or none, is replaced by a generated UUID,
// never refused. One definition for the REST port, its fast lane, its parser-error answers and
// the stream port.
import crypto from 'node:crypto';

const VALID = /^[\x21-\x7e]{1,128}$/;

export function requestIdOf(sent: string | readonly string[] | undefined | null): string {
  return typeof sent === 'string' && VALID.test(sent) ? sent : crypto.randomUUID();
}

import { GymError } from '../errors.ts';

/** A file larger than a reader asked for (`readFile(rel, { maxBytes })`): refused before it is read. */
export function fileTooLarge(rel: string, size: number, maxBytes: number): GymError {
  return new GymError('FILE_TOO_LARGE', `'${rel}' is ${size} bytes, more than the ${maxBytes} asked for`, { size, maxBytes });
}

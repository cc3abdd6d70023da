import { loadModel, type LoadModelOptions } from '../../../src/sandbox/model/load-model.js';
import { ModelError } from '../../../src/sandbox/model/model-error.js';

/** The ModelError that loading `text` throws; anything else (no error, another error) fails. */
export function modelErrorOf(
  text: string,
  file: string,
  options: LoadModelOptions = {},
): ModelError {
  try {
    loadModel(text, file, options);
  } catch (error) {
    if (error instanceof ModelError) return error;
    throw error;
  }
  throw new Error('expected a ModelError');
}

/** The 1-based line and column of the first `needle` in `text`, `plus` characters on. */
export function positionOf(text: string, needle: string, plus = 0): [number, number] {
  const i = text.indexOf(needle) + plus;
  if (i < plus) throw new Error(`${needle} not in text`);
  const before = text.slice(0, i).split('\n');
  return [before.length, before[before.length - 1]!.length + 1];
}

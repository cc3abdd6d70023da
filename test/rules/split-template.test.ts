import { describe, expect, it } from 'vitest';
import { splitTemplate } from '../../src/rules/split-template.js';
import { closestMatch, editDistance } from '../../src/core/source/closest-match.js';

describe('splitTemplate', () => {
  it('splits text and expressions with their offsets', () => {
    expect(splitTemplate('a ${{ x.y }} b ${{z}}')).toEqual([
      { kind: 'text', text: 'a ' },
      { kind: 'expr', source: 'x.y', offset: 6 },
      { kind: 'text', text: ' b ' },
      { kind: 'expr', source: 'z', offset: 18 },
    ]);
  });

  it('handles map literals and string literals with braces inside', () => {
    expect(splitTemplate('${{ {"a": {"b": "}}"}} }}')).toEqual([
      { kind: 'expr', source: '{"a": {"b": "}}"}}', offset: 4 },
    ]);
  });

  it('escapes $${{ as a literal', () => {
    expect(splitTemplate('cost: $${{ x }}')).toEqual([{ kind: 'text', text: 'cost: ${{ x }}' }]);
  });

  it('reports unclosed and empty templates with their offsets', () => {
    expect(splitTemplate('ab ${{ x')).toEqual({
      problem: '"${{" is not closed: end the expression with "}}"',
      offset: 3,
    });
    expect(splitTemplate('${{  }}')).toEqual({
      problem: 'empty "${{ }}": put an expression inside',
      offset: 0,
    });
  });
});

describe('closestMatch', () => {
  it('suggests near misses only', () => {
    expect(closestMatch('createAndExcercise', ['create', 'createAndExercise', 'exercise'])).toBe(
      'createAndExercise',
    );
    expect(closestMatch('Europe/Zurch', ['Europe/Zurich', 'Europe/Paris'])).toBe('Europe/Zurich');
    expect(closestMatch('payr', ['payer', 'issuer'])).toBe('payer');
    expect(closestMatch('banana', ['payer', 'issuer'])).toBeUndefined();
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abcdefgh', 2)).toBe(3);
  });
});

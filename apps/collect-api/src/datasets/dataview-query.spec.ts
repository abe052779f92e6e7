import { compileDataviewQuery, parseDataviewColumns, parseDataviewQuery } from './dataview-query.js';

describe('dataview query compilation', () => {
  it('keeps columns and values out of the SQL text (parameters only)', () => {
    const evil = "x'); DROP TABLE submissions; --";
    const { sql, params } = compileDataviewQuery([{ column: 'name', filter: '=', value: evil }]);
    expect(sql).not.toContain(evil);
    expect(sql).not.toContain("'name'");
    expect(Object.values(params)).toEqual(['name', evil]);
  });

  it('compares numerically only for numeric values; ORs the "or" items as one group', () => {
    const { sql } = compileDataviewQuery([
      { column: 'age', filter: '>', value: 5 },
      { column: 'a', filter: '=', value: 'x', condition: 'or' },
      { column: 'b', filter: '!=', value: 'y', condition: 'or' },
    ]);
    expect(sql).toMatch(/^COALESCE\(\(CASE WHEN .* AS numeric\) > CAST\(:dv_v0 AS numeric\)/);
    expect(sql).toContain(' AND (COALESCE(');
    expect(sql).toContain(' OR COALESCE(');
    expect(sql).toContain('<> CAST(:dv_v2 AS text)');
    expect(compileDataviewQuery([]).sql).toBe('true');
  });

  it('validates filters and columns (lists or JSON strings)', () => {
    expect(parseDataviewQuery('[{"column":"a","filter":"<=","value":"3"}]')).toEqual([{ column: 'a', filter: '<=', value: '3' }]);
    expect(() => parseDataviewQuery([{ column: 'a', filter: 'LIKE', value: 'x' }])).toThrow();
    expect(() => parseDataviewQuery([{ column: 'a b', filter: '=', value: 'x' }])).toThrow();
    expect(() => parseDataviewQuery([{ column: 'a', filter: '=', value: { x: 1 } }])).toThrow();
    expect(() => parseDataviewQuery('not json')).toThrow();
    expect(parseDataviewColumns('["a","g/b","a"]')).toEqual(['a', 'g/b']);
    expect(() => parseDataviewColumns([])).toThrow();
  });
});

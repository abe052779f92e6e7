import { validateInput } from '@collect/platform';
import { CreateDataviewDto } from './dataset.dto.js';
import { compileDataviewQuery } from './dataview-query.js';

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
    expect(sql).toMatch(/^COALESCE\(\(CASE WHEN .* AS numeric\) END\) > CAST\(:dv_v0 AS numeric\)/);
    expect(sql).toContain(' AND (COALESCE(');
    expect(sql).toContain(' OR COALESCE(');
    expect(sql).toContain('<> CAST(:dv_v2 AS text)');
    expect(compileDataviewQuery([]).sql).toBe('true');
  });

  it('validates filters and columns, as lists or JSON text (CreateDataviewDto)', async () => {
    const view = (over: Record<string, unknown>) => validateInput(CreateDataviewDto, { name: 'v', xform: 1, columns: ['a'], ...over });
    expect((await view({ query: '[{"column":"a","filter":"<=","value":"3"}]' })).query).toEqual([{ column: 'a', filter: '<=', value: '3' }]);
    const refused = (over: Record<string, unknown>) => view(over).then(() => null, (e: { getResponse(): unknown }) => e.getResponse());
    expect(await refused({ query: [{ column: 'a', filter: 'LIKE', value: 'x' }] })).toEqual({ query: ['[0].filter: One of = > < >= <= <> !=.'] });
    expect(await refused({ query: [{ column: 'a b', filter: '=', value: 'x' }] })).toEqual({ query: ['[0].column: A field name or xpath.'] });
    expect(await refused({ query: [{ column: 'a', filter: '=', value: { x: 1 } }] })).toEqual({ query: ['[0].value: A string or a number.'] });
    expect(await refused({ query: 'not json' })).toEqual({ query: ['Must be a list of {column, filter, value, condition?}.'] });
    expect((await view({ columns: '["a","g/b","a"]' })).columns).toEqual(['a', 'g/b', 'a']);
    expect(await refused({ columns: [] })).toEqual({ columns: ['A non-empty list of field names (xpaths).'] });
    expect(await refused({ columns: ["name') OR 1=1 --"] })).toEqual({ columns: ['A non-empty list of field names (xpaths).'] });
  });
});

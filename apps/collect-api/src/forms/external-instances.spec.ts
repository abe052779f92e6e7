import { externalCsvNames } from './external-instances.js';

describe('externalCsvNames', () => {
  it('names the CSV files of external instances once each, in document order', () => {
    const xml = `<model><instance><data/></instance>
      <instance id="trees" src="jr://file-csv/trees.csv"/>
      <instance id='plots' src='jr://file-csv/plots.csv'/>
      <instance id="trees2" src="jr://file-csv/trees.csv"/>
      <instance id="photo" src="jr://file/trees.xml"/>
      <instance id="odd" src="jr://file-csv/a/b.csv"/></model>`;
    expect(externalCsvNames(xml)).toEqual(['trees', 'plots']);
  });

  it('ignores the text outside a src attribute and mismatched quotes', () => {
    expect(externalCsvNames(`<label>jr://file-csv/trees.csv</label><instance src="jr://file-csv/x.csv'/>`)).toEqual([]);
  });
});

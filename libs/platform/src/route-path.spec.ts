import { normalisedRoutePath } from './route-path.js';

describe('normalisedRoutePath: every spelling a router serves compares equal', () => {
  it.each([
    ['/connect/token', '/connect/token'],
    ['/connect/Token', '/connect/token'],
    ['/CONNECT/TOKEN/', '/connect/token'],
    ['/connect/%74oken', '/connect/token'],
    ['/connect/%2574oken', '/connect/token'],
    ['//connect//token//', '/connect/token'],
    ['/connect/token?x=1', '/connect/token'],
    ['/interaction/AbC/LOGIN', '/interaction/abc/login'],
    ['/interaction/AbC/%4cogin', '/interaction/abc/login'],
    ['', '/'],
    [undefined, '/'],
  ])('%s -> %s', (raw, expected) => {
    expect(normalisedRoutePath(raw)).toBe(expected);
  });
});

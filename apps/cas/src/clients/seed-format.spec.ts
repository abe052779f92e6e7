import { parseSeed, SeedError } from './seed-format.js';

describe('seed format', () => {
  it('fills defaults and adds the code response type for authorization_code clients', () => {
    const seed = parseSeed({ clients: [{ client_id: 'web', client_secret: 'abcdefghij', grant_types: ['authorization_code'], redirect_uris: ['https://app.example/cb'] }] }, 'x');
    expect(seed.resources).toEqual([]);
    expect(seed.users).toEqual([]);
    expect(seed.clients[0]).toMatchObject({ response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic', enabled: true });
  });

  it.each([
    [{ clients: [{ client_id: 'x', grant_types: ['authorization_code'] }] }, /clients\.0\.redirect_uris: needed/],
    [{ clients: [{ client_id: 'x', grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }] }, /confidential/],
    [{ clients: [{ client_id: 'x', grant_types: ['refresh_token'] }] }, /only for authorization_code/],
    [{ clients: [{ client_id: 'x', grant_types: ['implicit'], redirect_uris: ['https://a.example/cb'] }] }, /id_token token/],
    [{ resources: [{ name: 'has space', scopes: [] }] }, /resources\.0\.name/],
    [{ resources: [{ name: 'r', scopes: ['bad scope'] }] }, /resources\.0\.scopes\.0/],
    [{ users: [{ username: '' }] }, /users\.0\.username/],
    [[], /\(root\)/],
  ])('refuses %j', (doc, message) => {
    expect(() => parseSeed(doc, 'seed.json')).toThrow(SeedError);
    expect(() => parseSeed(doc, 'seed.json')).toThrow(message);
  });
});

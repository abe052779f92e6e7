import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FieldValidationError } from '@collect/contracts';
import { loadConfigOrExit, validateInput } from '@collect/platform';
import { loadCollectConfig, type CollectConfig } from './config/collect-config.js';
import { dataSourceOptions, runMigrations } from './data-source.js';
import { OAuthApplicationsService } from './oauth2/oauth-applications.service.js';
import { applicationInput, CreateOAuthApplicationDto } from './oauth2/oauth2.dto.js';
import { OAuthApplicationEntity, OAuthGrantEntity, OAuthTokenEntity } from './oauth2/oauth2.entities.js';
import { OAuth2Repository } from './oauth2/oauth2.repository.js';
import { UserEntity } from './users/user.entity.js';
import { UsersRepository } from './users/users.repository.js';
import { PasswordHasher } from './users/password-hasher.js';
import { kekFromConfig } from './encryption/key-sealing.js';
import { resealServerKeys } from './form-encryption/kek-rotation.js';
import { KekRotationRepository } from './form-encryption/kek-rotation.repository.js';
import { UsersService } from './users/users.service.js';

const USAGE = `collect-api admin commands

  users create --username U --password P --email E [--superuser]
      Creates the user, or updates the password/email/superuser flag of an existing one. A new
      password, a promotion or a reactivation of an existing account revokes its API, temporary
      and OAuth tokens and its sessions (credentials_revoked in the output).
  applications create --name N --redirect-uris "URI [URI...]" [--client-type confidential|public] [--owner USERNAME]
      Registers an OAuth 2.0 client of /o/; prints client_id and (confidential) client_secret once.
  encryption rekey
      Re-seals every server-mode private key sealed under ENCRYPTION_KEK_PREVIOUS under
      ENCRYPTION_KEK (docs/encryption.md "Rotating ENCRYPTION_KEK"); prints the counts and the
      keys neither opens. Idempotent.

Reads the same environment as the service (DATABASE_URL, ...). Prints one JSON line.`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const [group, action, ...rest] = argv;
  if (!group || group === '--help' || group === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfigOrExit(loadCollectConfig);
  // The services log through Nest's Logger; the command's output is its JSON line.
  Logger.overrideLogger(false);
  const run = commands[`${group} ${action ?? ''}`];
  if (!run) throw new UsageError(`unknown command: ${[group, action].filter(Boolean).join(' ')}`);
  if (config.MIGRATIONS_RUN) await runMigrations(config);
  const ds = new DataSource({ ...dataSourceOptions(config), extra: { max: 2 } });
  await ds.initialize();
  try {
    const result = await run(ds, rest, config);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await ds.destroy();
  }
}

const commands: Record<string, (ds: DataSource, args: string[], config: CollectConfig) => Promise<unknown>> = {
  async 'encryption rekey'(ds, _args, config) {
    const kek = kekFromConfig(config.ENCRYPTION_KEK);
    if (!kek) throw new UsageError('encryption rekey needs ENCRYPTION_KEK (the new key-encryption key) and ENCRYPTION_KEK_PREVIOUS (the one the keys are sealed under)');
    return resealServerKeys(new KekRotationRepository(ds), kek, kekFromConfig(config.ENCRYPTION_KEK_PREVIOUS));
  },

  async 'users create'(ds, args, config) {
    const { values } = parseArgs({
      args,
      options: { username: { type: 'string' }, password: { type: 'string' }, email: { type: 'string' }, superuser: { type: 'boolean', default: false } },
    });
    if (!values.username || !values.password) throw new UsageError('users create needs --username and --password');
    const users = new UsersService(new UsersRepository(ds.getRepository(UserEntity)), new PasswordHasher(config));
    const { user, created, credentialsRevoked } = await users.createOrUpdate({ username: values.username, password: values.password, email: values.email ?? '', isSuperuser: values.superuser });
    return { id: user.id, username: user.username, email: user.email, is_superuser: user.isSuperuser, created, credentials_revoked: credentialsRevoked };
  },

  async 'applications create'(ds, args) {
    const { values } = parseArgs({
      args,
      options: { name: { type: 'string' }, 'redirect-uris': { type: 'string' }, 'client-type': { type: 'string', default: 'confidential' }, owner: { type: 'string' } },
    });
    let ownerId: number | null = null;
    if (values.owner) {
      const owner = await new UsersRepository(ds.getRepository(UserEntity)).findByUsername(values.owner);
      if (!owner) throw new UsageError(`no user named ${values.owner}`);
      ownerId = owner.id;
    }
    const repo = new OAuth2Repository(ds, ds.getRepository(OAuthApplicationEntity), ds.getRepository(OAuthGrantEntity), ds.getRepository(OAuthTokenEntity));
    // The same checks as POST /api/v1/oauth-applications.
    const input = await validateInput(CreateOAuthApplicationDto, { name: values.name, client_type: values['client-type'], redirect_uris: values['redirect-uris'] });
    const { app, clientSecret } = await new OAuthApplicationsService(repo).create(ownerId, applicationInput(input));
    return { id: app.id, client_id: app.clientId, ...(clientSecret ? { client_secret: clientSecret } : {}), name: app.name, client_type: app.clientType, redirect_uris: app.redirectUris };
  },
};

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (err instanceof FieldValidationError) {
    process.stderr.write(`invalid input: ${JSON.stringify(err.getResponse())}\n`);
    process.exit(2);
  }
  process.stderr.write(`command failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** A relying party / machine client. */
@Entity({ name: 'cas_clients' })
export class ClientEntity {
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 200 })
  clientId: string;

  /** `sha256:<hex>` of the secret: secrets are random and high-entropy, so a fast hash is enough and keeps the token endpoint fast. */
  @Column({ name: 'secret_hash', type: 'varchar', length: 100, nullable: true })
  secretHash: string | null;

  @Column({ name: 'grant_types', type: 'text', array: true, default: () => "'{}'" })
  grantTypes: string[];

  @Column({ name: 'response_types', type: 'text', array: true, default: () => "'{}'" })
  responseTypes: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  scopes: string[];

  /** Resource names, in order: the first is the default audience. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  resources: string[];

  @Column({ name: 'redirect_uris', type: 'text', array: true, default: () => "'{}'" })
  redirectUris: string[];

  @Column({ name: 'post_logout_redirect_uris', type: 'text', array: true, default: () => "'{}'" })
  postLogoutRedirectUris: string[];

  @Column({ name: 'token_endpoint_auth_method', type: 'varchar', length: 40 })
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

import { Injectable } from '@nestjs/common';
import { DataSource, In, type Repository } from 'typeorm';
import { ClientEntity } from './client.entity.js';
import { ResourceEntity } from './resource.entity.js';

@Injectable()
export class ClientsRepository {
  private readonly clients: Repository<ClientEntity>;
  private readonly resources: Repository<ResourceEntity>;

  constructor(ds: DataSource) {
    this.clients = ds.getRepository(ClientEntity);
    this.resources = ds.getRepository(ResourceEntity);
  }

  findClient(clientId: string): Promise<ClientEntity | null> {
    return this.clients.findOneBy({ clientId });
  }

  saveClient(client: Partial<ClientEntity>): Promise<ClientEntity> {
    return this.clients.save(this.clients.create(client));
  }

  findResource(name: string): Promise<ResourceEntity | null> {
    return this.resources.findOneBy({ name });
  }

  findResources(names: string[]): Promise<ResourceEntity[]> {
    return names.length ? this.resources.findBy({ name: In(names) }) : Promise.resolve([]);
  }

  allResources(): Promise<ResourceEntity[]> {
    return this.resources.find({ order: { name: 'ASC' } });
  }

  saveResource(resource: Partial<ResourceEntity>): Promise<ResourceEntity> {
    return this.resources.save(this.resources.create(resource));
  }

  /** Changes whenever a resource is added or changed: the provider's scope list is rebuilt from it. */
  async resourcesVersion(): Promise<string> {
    const rows = await this.resources.query(`SELECT count(*)::text || ':' || coalesce(max(updated_at)::text, '') AS v FROM cas_resources`);
    return rows[0].v as string;
  }
}

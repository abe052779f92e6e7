import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Row changes of the tables processes cache, notified on the `collect_changes` channel
 * (database/change-notifications.ts; docs/forms.md, "Intake: caches and one statement").
 * Payloads: `form:<id>:<id_string>` (old and new id_string on an update), `role:<form_id>:<user_id>`,
 * `user:<id>`. PostgreSQL sends them at commit and folds identical payloads of one transaction.
 */
export class ChangeNotifications1764650000000 implements MigrationInterface {
  name = 'ChangeNotifications1764650000000';

  async up(q: QueryRunner): Promise<void> {
    // `<topic>:<column>[:<column>...]` of the old and the new row (one of them for INSERT/DELETE).
    await q.query(`
      CREATE FUNCTION collect_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        r jsonb;
        payload text;
      BEGIN
        FOREACH r IN ARRAY CASE TG_OP WHEN 'INSERT' THEN ARRAY[to_jsonb(NEW)] WHEN 'DELETE' THEN ARRAY[to_jsonb(OLD)] ELSE ARRAY[to_jsonb(OLD), to_jsonb(NEW)] END LOOP
          payload := TG_ARGV[0];
          FOR i IN 1 .. TG_NARGS - 1 LOOP
            payload := payload || ':' || (r ->> TG_ARGV[i]);
          END LOOP;
          PERFORM pg_notify('collect_changes', payload);
        END LOOP;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER forms_notify AFTER INSERT OR UPDATE OR DELETE ON forms FOR EACH ROW EXECUTE FUNCTION collect_notify_change('form', 'id', 'id_string')`);
    await q.query(`CREATE TRIGGER form_roles_notify AFTER INSERT OR UPDATE OR DELETE ON form_roles FOR EACH ROW EXECUTE FUNCTION collect_notify_change('role', 'form_id', 'user_id')`);
    await q.query(`CREATE TRIGGER users_notify AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION collect_notify_change('user', 'id')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS users_notify ON users`);
    await q.query(`DROP TRIGGER IF EXISTS form_roles_notify ON form_roles`);
    await q.query(`DROP TRIGGER IF EXISTS forms_notify ON forms`);
    await q.query(`DROP FUNCTION IF EXISTS collect_notify_change()`);
  }
}

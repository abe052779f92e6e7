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
    await q.query(`
      CREATE FUNCTION collect_notify_form() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('collect_changes', 'form:' || OLD.id || ':' || OLD.id_string); END IF;
        IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('collect_changes', 'form:' || NEW.id || ':' || NEW.id_string); END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION collect_notify_form_role() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('collect_changes', 'role:' || OLD.form_id || ':' || OLD.user_id); END IF;
        IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('collect_changes', 'role:' || NEW.form_id || ':' || NEW.user_id); END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION collect_notify_user() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('collect_changes', 'user:' || CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER forms_notify AFTER INSERT OR UPDATE OR DELETE ON forms FOR EACH ROW EXECUTE FUNCTION collect_notify_form()`);
    await q.query(`CREATE TRIGGER form_roles_notify AFTER INSERT OR UPDATE OR DELETE ON form_roles FOR EACH ROW EXECUTE FUNCTION collect_notify_form_role()`);
    await q.query(`CREATE TRIGGER users_notify AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION collect_notify_user()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS users_notify ON users`);
    await q.query(`DROP TRIGGER IF EXISTS form_roles_notify ON form_roles`);
    await q.query(`DROP TRIGGER IF EXISTS forms_notify ON forms`);
    await q.query(`DROP FUNCTION IF EXISTS collect_notify_user()`);
    await q.query(`DROP FUNCTION IF EXISTS collect_notify_form_role()`);
    await q.query(`DROP FUNCTION IF EXISTS collect_notify_form()`);
  }
}

-- mq: least-privilege roles for one job table. Fill in the placeholders
-- and run it as an administrator, e.g.
--   sed -e 's/{{DATABASE}}/jobs/g' -e 's/{{TABLE}}/mq_jobs/g' grants.sql | mariadb
-- then give each account its role:
--   GRANT mq_jobs_producer TO 'web'@'%';
--   SET DEFAULT ROLE mq_jobs_producer FOR 'web'@'%';      -- MariaDB
--   SET DEFAULT ROLE mq_jobs_producer TO 'web'@'%';       -- MySQL 8
-- `mq init` itself needs CREATE, ALTER, INDEX, SELECT, INSERT and UPDATE on
-- the database (an upgrade fills the counts of finished jobs):
-- run it as the schema's owner, not as one of these roles.

-- producer: mq push (with --dedup it reads the live job's id, nothing else;
-- push --every writes every_us and every_anchor in the same INSERT, which
-- needs nothing more)
CREATE ROLE IF NOT EXISTS {{TABLE}}_producer;
GRANT INSERT ON `{{DATABASE}}`.`{{TABLE}}` TO {{TABLE}}_producer;
GRANT SELECT (id, queue, dedup_live, dedup_unique) ON `{{DATABASE}}`.`{{TABLE}}` TO {{TABLE}}_producer;
GRANT SELECT (queue) ON `{{DATABASE}}`.`{{TABLE}}_queues` TO {{TABLE}}_producer;
-- Optional, for fast wakeups of consumers logged in as other users (see
-- mq-pop(1), WAKEUPS): seeing and killing their waiting statements takes
--   GRANT PROCESS, CONNECTION ADMIN ON *.* TO ...;   -- MariaDB 10.5+
--   GRANT PROCESS, CONNECTION_ADMIN ON *.* TO ...;   -- MySQL 8 (or SUPER)
-- Without them consumers still find new jobs within a second.
-- On a Galera cluster a push wakes the consumers waiting on the other
-- nodes by updating their rows in the waiters table (mq-queue(7),
-- WAITERS); without this grant they find the push within a second.
-- mq wait and mq push --wait write a row there, woken by the finishes
-- of their jobs (mq-wait(1), WAKEUPS), and delete it when they end;
-- without these four they look about once a second instead.
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_waiters` TO {{TABLE}}_producer;
-- push --after (mq-push(1), DEPENDENCIES): the parents' count of
-- dependents written, their states read (in the archive too), the
-- dependent's edges and shards written, and the dependent itself made
-- to wait (or due, its parents all done)
GRANT SELECT (id, state, every_us, children, parent_shards, available_at),
  UPDATE (children, parent_shards, if_parent_dies, available_at)
  ON `{{DATABASE}}`.`{{TABLE}}` TO {{TABLE}}_producer;
GRANT SELECT (id, state) ON `{{DATABASE}}`.`{{TABLE}}_archive` TO {{TABLE}}_producer;
GRANT SELECT, INSERT ON `{{DATABASE}}`.`{{TABLE}}_deps` TO {{TABLE}}_producer;
GRANT SELECT, INSERT ON `{{DATABASE}}`.`{{TABLE}}_waits` TO {{TABLE}}_producer;
-- push --wait and mq wait read their jobs' outcome: state (above), the
-- error of a dead one and when it finished, in the archive too
GRANT SELECT (last_error, finished_at) ON `{{DATABASE}}`.`{{TABLE}}` TO {{TABLE}}_producer;
GRANT SELECT (last_error, finished_at) ON `{{DATABASE}}`.`{{TABLE}}_archive` TO {{TABLE}}_producer;

-- consumer: mq pop, ack, fail, extend, work (an ack of a recurring job
-- reschedules it: the same UPDATE)
CREATE ROLE IF NOT EXISTS {{TABLE}}_consumer;
GRANT SELECT, UPDATE ON `{{DATABASE}}`.`{{TABLE}}` TO {{TABLE}}_consumer;
GRANT SELECT ON `{{DATABASE}}`.`{{TABLE}}_queues` TO {{TABLE}}_consumer;
-- the counts and counters, which an ack, a fail and a cancel add to
-- (SELECT of n and total: the sums read them), and the history a fail
-- writes
GRANT SELECT (n, total), INSERT, UPDATE ON `{{DATABASE}}`.`{{TABLE}}_counts` TO {{TABLE}}_consumer;
GRANT INSERT ON `{{DATABASE}}`.`{{TABLE}}_history` TO {{TABLE}}_consumer;
-- on a Galera cluster a waiting consumer writes its rows in the waiters
-- table (an update when they are there already) and deletes them, and
-- those of dead connections of its node (mq-queue(7), WAITERS)
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_waiters` TO {{TABLE}}_consumer;
-- a claim of a limited queue (mq-limit(1)) writes the gate of the queue
-- or of the job's key (a new one: an INSERT), and the ticks a rate
-- counts; it deletes those past a rate lowered since (without DELETE
-- they stay, and each claim of that gate reads them all)
GRANT SELECT, INSERT, UPDATE ON `{{DATABASE}}`.`{{TABLE}}_gates` TO {{TABLE}}_consumer;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_ticks` TO {{TABLE}}_consumer;
-- a finish of a job with dependents meets their edges and lowers their
-- shards (mq-queue(7), DEPENDENCIES)
GRANT SELECT, UPDATE ON `{{DATABASE}}`.`{{TABLE}}_deps` TO {{TABLE}}_consumer;
GRANT SELECT, UPDATE ON `{{DATABASE}}`.`{{TABLE}}_waits` TO {{TABLE}}_consumer;
-- firing the due schedules of its queues (mq-schedule(1), FIRING) moves
-- their next_at and records each instant in the ledger; it also pushes
-- the runs, jobs like any other, which takes the producer's role too (a
-- consumer alone may not push)
GRANT SELECT, UPDATE (next_at, version) ON `{{DATABASE}}`.`{{TABLE}}_schedules` TO {{TABLE}}_consumer;
GRANT SELECT, INSERT ON `{{DATABASE}}`.`{{TABLE}}_fired` TO {{TABLE}}_consumer;

-- operator: mq stats, requeue-stale, archive, pause, resume, purge,
-- cancel, stats --recount, ls, show, why, check, top, retry (and all the
-- above). cancel needs only SELECT
-- and UPDATE on the job table and to add to the counts, so the consumer
-- role's grants allow it too.
CREATE ROLE IF NOT EXISTS {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, DELETE ON `{{DATABASE}}`.`{{TABLE}}_archive` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_queues` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE ON `{{DATABASE}}`.`{{TABLE}}_counts` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, DELETE ON `{{DATABASE}}`.`{{TABLE}}_history` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_waiters` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_gates` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_ticks` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_deps` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_waits` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_schedules` TO {{TABLE}}_operator;
GRANT SELECT, INSERT, UPDATE, DELETE ON `{{DATABASE}}`.`{{TABLE}}_fired` TO {{TABLE}}_operator;

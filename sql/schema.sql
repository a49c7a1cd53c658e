-- mq schema, version 12: the job table, its archive, the queues' settings
-- (pause, limits), the counts and counters, the history of failed
-- attempts, the waiters, the gates and ticks of limited queues, and the
-- dependencies of jobs pushed after others (mq push --after), and the
-- calendar schedules with the ledger of what they fired. Upgrades from older versions are sql/upgrade-N.sql.
-- `mq init` puts the --table name (default mq_jobs) in place of the
-- placeholder and runs each statement; `mq init --print` shows the result. The version is
-- the number in the job table's COMMENT, which every command checks.
-- Times are UTC: mq writes and compares them with UTC_TIMESTAMP(6), and
-- the defaults are UTC_TIMESTAMP(6) too, so that a row inserted by plain
-- SQL from a session in any time zone is due when it should be
-- (CURRENT_TIMESTAMP would be the session's local time). Expression
-- defaults need MariaDB 10.2 or MySQL 8.0.13.
--
-- The CHECK constraints refuse rows that no mq would write and that mq
-- could not handle as designed (MariaDB 10.2+, MySQL 8.0.16+; older
-- servers ignore them, and mq copes with such rows, see mq-queue(7)).
-- They are named after the table (MySQL wants constraint names unique in
-- a database): T_queue, T_state, T_tries, T_times, T_lease, T_done,
-- T_every.

CREATE TABLE IF NOT EXISTS `{{TABLE}}` (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- 'ready' rows whose available_at is in the future are "scheduled"
  state         ENUM('ready', 'leased', 'done', 'dead') NOT NULL DEFAULT 'ready',
  -- lower runs first
  priority      SMALLINT NOT NULL DEFAULT 0,
  payload       LONGBLOB NOT NULL,
  attempts      INT UNSIGNED NOT NULL DEFAULT 0,
  max_attempts  INT UNSIGNED NOT NULL DEFAULT 10,
  available_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  leased_until  DATETIME(6) NULL,
  -- written fresh by every claim; ack, fail and extend must present it
  lease_token   CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL,
  -- host:pid of the claiming process
  leased_by     VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
  created_at    DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  finished_at   DATETIME(6) NULL,
  -- bytes, truncated by mq: recording a failure must never fail
  last_error    BLOB NULL,
  dedup_key     VARBINARY(255) NULL,
  -- the key while the job is live, NULL once finished: frees the key
  dedup_live    VARBINARY(255) AS (IF(state IN ('ready', 'leased'), dedup_key, NULL)) STORED,
  -- what the dedup key is unique over: queue '/' key while the job is
  -- live, else NULL as a whole. One column, so that a job without a
  -- live key gives Galera no certification key (with (queue,
  -- dedup_live), every such job of a queue shared one: upgrade-8.sql)
  dedup_unique  VARBINARY(320) AS (IF(state IN ('ready', 'leased')
    AND dedup_key IS NOT NULL, CONCAT(queue, '/', dedup_key), NULL)) STORED,
  -- recurring jobs: an ack makes the job due again at the first
  -- every_anchor + k * every_us after now instead of done; NULL: once
  every_us      BIGINT NULL,
  every_anchor  DATETIME(6) NULL,
  -- what a per-key limit counts by (mq push --key; mq-limit(1)): any
  -- bytes but control bytes, 1 to 255 of them; NULL: no key
  job_key       VARBINARY(255) NULL,
  -- dependents pushed after this job (mq push --after; NULL: none): each
  -- one's push adds 1, a write that orders it against this job's finish
  -- (locks on one server, certification on Galera); a finish with none
  -- reads no dependencies
  children      INT UNSIGNED NULL,
  -- a dependent (NULL: not one): the shards of its parents
  -- (<table>_waits) not all done yet; while above 0 and ready it is due
  -- at the end of time ('9999-12-31 23:59:59.999999'), which no claim
  -- reaches
  parent_shards INT UNSIGNED NULL,
  -- a dependent: what a parent that dies (dead, cancelled) does to it
  if_parent_dies ENUM('cancel', 'run', 'wait') NULL,
  PRIMARY KEY (id),
  -- the claim: equalities first, then exactly the claim's ORDER BY
  KEY claim (queue, state, priority, available_at, id),
  -- is anything due? One probe, however many jobs are scheduled for later
  -- (in the claim index they sit among the due ones: priority comes first)
  KEY due (queue, state, available_at),
  -- expired leases, for requeue-stale over all queues
  KEY lease (state, leased_until),
  -- finished jobs by age, for archive
  KEY finished (state, finished_at),
  UNIQUE KEY dedup (dedup_unique),
  -- the recurring jobs alone, for stats
  KEY recurring (every_us, queue, state),
  -- mq ls: a queue's jobs of one state in id order (InnoDB ends every
  -- key with the primary key), so a page reads its own rows, not the
  -- million done jobs it is the newest of
  KEY list (queue, state),
  -- a limited claim: how many jobs of the queue, of a key, hold a live
  -- lease (a range of the queue's leased entries, of the key's)
  KEY held (queue, state, job_key, leased_until),
  -- a queue name mq accepts (--queue): mq can claim from it
  CONSTRAINT `{{TABLE}}_queue` CHECK (queue REGEXP '^[A-Za-z0-9_.-]+$'),
  -- not '' (what a non-strict session stores for a value not in the ENUM)
  CONSTRAINT `{{TABLE}}_state`
    CHECK (state IN ('ready', 'leased', 'done', 'dead')),
  -- a waiting job has a delivery left; a claim adds 1 and cannot overflow
  CONSTRAINT `{{TABLE}}_tries` CHECK (max_attempts >= 1
    AND attempts <= max_attempts
    AND (state <> 'ready' OR attempts < max_attempts)),
  -- no zero dates ('0000-00-00'): they compare before every real time
  CONSTRAINT `{{TABLE}}_times` CHECK (available_at >= '1000-01-01'
    AND created_at >= '1000-01-01'
    AND (leased_until IS NULL OR leased_until >= '1000-01-01')
    AND (finished_at IS NULL OR finished_at >= '1000-01-01')
    AND (every_anchor IS NULL OR every_anchor >= '1000-01-01')),
  -- a lease has a deadline (else it is never reaped) and a token
  CONSTRAINT `{{TABLE}}_lease` CHECK (state <> 'leased'
    OR (leased_until IS NOT NULL AND lease_token IS NOT NULL)),
  -- a finished job has its time (archive goes by it)
  CONSTRAINT `{{TABLE}}_done`
    CHECK (state IN ('ready', 'leased') OR finished_at IS NOT NULL),
  -- a period is positive and counts from an anchor
  CONSTRAINT `{{TABLE}}_every` CHECK (every_us IS NULL
    OR (every_us > 0 AND every_anchor IS NOT NULL)),
  -- a key mq accepts (--key): not empty (the queue's own gate is '')
  CONSTRAINT `{{TABLE}}_key` CHECK (job_key IS NULL OR job_key <> '')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq schema 12';

CREATE TABLE IF NOT EXISTS `{{TABLE}}_archive` (
  id            BIGINT UNSIGNED NOT NULL,
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state         ENUM('ready', 'leased', 'done', 'dead') NOT NULL,
  priority      SMALLINT NOT NULL,
  payload       LONGBLOB NOT NULL,
  attempts      INT UNSIGNED NOT NULL,
  max_attempts  INT UNSIGNED NOT NULL,
  available_at  DATETIME(6) NOT NULL,
  leased_until  DATETIME(6) NULL,
  lease_token   CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL,
  leased_by     VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
  created_at    DATETIME(6) NOT NULL,
  finished_at   DATETIME(6) NULL,
  last_error    BLOB NULL,
  dedup_key     VARBINARY(255) NULL,
  archived_at   DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  job_key       VARBINARY(255) NULL,
  PRIMARY KEY (id),
  KEY finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq archive 1';

-- one row per queue that has settings; no row: defaults (not paused,
-- no limits). The limits (mq-limit(1); NULL: none): at most concurrency
-- jobs of the queue, per_key of one key, hold a live lease at once; at
-- most rate claims of the queue, key_rate of one key, in any rate_us
-- (key_rate_us) microseconds.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_queues` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  paused        TINYINT NOT NULL DEFAULT 0,
  paused_at     DATETIME(6) NULL,
  concurrency   INT UNSIGNED NULL,
  per_key       INT UNSIGNED NULL,
  rate          INT UNSIGNED NULL,
  rate_us       BIGINT UNSIGNED NULL,
  key_rate      INT UNSIGNED NULL,
  key_rate_us   BIGINT UNSIGNED NULL,
  PRIMARY KEY (queue),
  CONSTRAINT `{{TABLE}}_queues_limits` CHECK ((concurrency IS NULL
    OR concurrency >= 1) AND (per_key IS NULL OR per_key >= 1)
    AND (rate IS NULL) = (rate_us IS NULL) AND (rate IS NULL
    OR (rate >= 1 AND rate_us >= 1)) AND (key_rate IS NULL) =
    (key_rate_us IS NULL) AND (key_rate IS NULL
    OR (key_rate >= 1 AND key_rate_us >= 1)))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq queues 3';

-- Finished jobs per queue, and the queue's counters, kept by the writes
-- that change them, in the same transaction, so that mq stats reads a
-- few rows here instead of every finished job's index entry.
--   n: 'done' and 'dead' count the job table's finished jobs, 'archived'
--   the archive's (a gauge: archive and purge lower it).
--   total: what was ever added to n (a counter: never lowered). The
--   states that are events only (failed: a fail that retries; requeued:
--   a stale lease taken back; retried: a dead job put back by mq retry;
--   cancelled: a waiting or running job deleted by cancel or purge) add
--   to both. How many jobs were pushed is not written by the push (that
--   would cost it a round trip): it is what is live now plus what left,
--   less what came back (mq-queue(7) COUNTERS).
-- A count is the sum of its slots: each session adds to its own
-- (CONNECTION_ID() % 16), so concurrent consumers seldom wait on one
-- row. Rows changed by hand are not counted: `mq stats --recount`.
-- mq init fills the counts from the tables, then drops ', to fill' from
-- the comment; a table made by hand from this text is filled by the next
-- mq init.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_counts` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state         ENUM('done', 'dead', 'archived', 'failed', 'requeued',
                  'retried', 'purged') NOT NULL,
  slot          TINYINT UNSIGNED NOT NULL,
  n             BIGINT NOT NULL,
  total         BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, state, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq counts 1, to fill';

-- How each attempt that did not end in an ack ended, and what an
-- operator did to the job: one row per event, written in the transaction
-- of the write that ended the attempt. Kept while the job is kept, in the
-- job table or in the archive; deleted with it.
--   event: failed (mq fail, or mq work's job failed or timed out),
--   expired (the lease ran out: requeue-stale took it back), retried
--   (mq retry put the dead job back, attempts reset).
--   state: where the event left the job: 'ready' (to run again) or
--   'dead'.
--   attempt: the job's attempts when it happened; worker: the lease
--   holder (host:pid); error: the error text, truncated as last_error.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_history` (
  job_id        BIGINT UNSIGNED NOT NULL,
  seq           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  event         ENUM('failed', 'expired', 'retried') NOT NULL,
  state         ENUM('ready', 'dead') NOT NULL,
  attempt       INT UNSIGNED NOT NULL,
  at            DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  worker        VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
  error         BLOB NULL,
  PRIMARY KEY (job_id, seq),
  KEY seq (seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq history 1';

-- Consumers waiting for jobs on a Galera cluster, one row per waiting
-- connection and queue: a push on another node reaches them through it
-- (mq-queue(7) WAITERS). A waiter writes its rows when it starts to wait
-- and deletes them when it stops; while it parks, its statement holds
-- them share-locked, so that a pusher's UPDATE of one, replicated to the
-- waiter's node, aborts the park there at once (a brute-force abort).
-- Unused on a single server.
--   node: the waiter's server, @@hostname:@@port (one per node, even
--   with several nodes on one machine); conn: its CONNECTION_ID() there;
--   login: its user name, as the process list shows it (a waiter may
--   delete the rows of dead connections of its own node whose owner it
--   can see there); since: when it started to wait; wakes: how many
--   times pushers woke it (they wake the least woken first).
CREATE TABLE IF NOT EXISTS `{{TABLE}}_waiters` (
  node          VARBINARY(255) NOT NULL,
  conn          BIGINT UNSIGNED NOT NULL,
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  login         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  since         DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  wakes         BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (node, conn, queue),
  -- a pusher's wakeup: the queue's waiters of the other nodes, in two
  -- ranges that never touch its own node's rows (which their waiters
  -- hold locked while they park)
  KEY wake (queue, node)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq waiters 1';

-- The gates of limited queues (mq-limit(1)): a claim of a limited
-- queue's job first writes the gate of the queue (gate_key '') when the
-- queue has a concurrency or a rate, and that of the job's key when the
-- queue has a per-key limit or rate, then counts the live leases (or
-- the ticks) the limit allows: the write makes the claims of one gate
-- wait for each other on one server, and makes them conflict on a
-- Galera cluster (a certified write, not a read), so that the count
-- each one reads is exact. Claims of other keys write other rows. A
-- gate holds no slot: a slot is the lease itself, ended by the ack,
-- fail, release or cancel that ends the lease, or by its expiry.
--   claims: how many claims passed the gate (for operators).
CREATE TABLE IF NOT EXISTS `{{TABLE}}_gates` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  gate_key      VARBINARY(255) NOT NULL,
  claims        BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, gate_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq gates 1';

-- The claims a rate counts: per gate, the times of its last rate claims
-- (n from 0 to rate - 1, reused in turn): a claim may take the oldest
-- only if it is at least the window old, so no window holds more.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_ticks` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  gate_key      VARBINARY(255) NOT NULL,
  n             INT UNSIGNED NOT NULL,
  at            DATETIME(6) NOT NULL,
  PRIMARY KEY (queue, gate_key, n),
  -- the gate's oldest tick, which a claim takes over
  KEY oldest (queue, gate_key, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq ticks 1';

-- Dependencies (mq push --after): one row per parent of a dependent.
--   met: the parent is done (or dead, for a dependent that runs anyway):
--   counted once, by the transaction that finished it.
--   on_death: the dependent's if_parent_dies, here so that a finish
--   reads no dependent's row to know what to count.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_deps` (
  parent        BIGINT UNSIGNED NOT NULL,
  child         BIGINT UNSIGNED NOT NULL,
  met           TINYINT NOT NULL DEFAULT 0,
  on_death      ENUM('cancel', 'run', 'wait') NOT NULL,
  PRIMARY KEY (parent, child),
  KEY child (child, parent)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq deps 1';

-- A dependent's parents not yet met, counted per shard (parent % 1024):
-- siblings finished at once write different rows (no hot row, no
-- certification conflict between them); a finish that empties a shard
-- lowers the dependent's parent_shards, a write of the dependent's row,
-- so that the last two shards emptied at once wait for (one server) or
-- conflict with (Galera) each other, and exactly one sees 0 and makes
-- it due.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_waits` (
  child         BIGINT UNSIGNED NOT NULL,
  shard         SMALLINT UNSIGNED NOT NULL,
  parents       INT UNSIGNED NOT NULL,
  PRIMARY KEY (child, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq waits 1';

-- Calendar schedules (mq schedule, issue 33; doc/schedules.md): one row
-- a schedule as declared, and when it fires next. The runs are ordinary
-- jobs of the table; what fired is recorded in <table>_fired, not in
-- them. Firing reads the due ones by next_at (due; queue_due for the
-- queues a consumer takes), locks each row (SKIP LOCKED) and moves
-- next_at forward; each change bumps version, which every write
-- checks (an apply that read before a fire or another apply committed
-- starts again).
CREATE TABLE IF NOT EXISTS `{{TABLE}}_schedules` (
  name          VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- the canonical form (mq_cron_format) and the zone's tzdata name
  expr          VARCHAR(400) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  zone          VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- the runs' push options
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload       LONGBLOB NOT NULL,
  priority      INT NOT NULL DEFAULT 0,
  max_attempts  INT UNSIGNED NOT NULL DEFAULT 10,
  job_key       VARBINARY(255) NULL,
  missed        ENUM('skip', 'once', 'all') NOT NULL DEFAULT 'once',
  missed_max    INT UNSIGNED NOT NULL DEFAULT 10,
  -- the next instant to fire (UTC): firing runs the instants from it up
  -- to now, by the missed policy
  next_at       DATETIME(6) NOT NULL,
  version       BIGINT UNSIGNED NOT NULL DEFAULT 1,
  changed_at    DATETIME(6) NOT NULL DEFAULT UTC_TIMESTAMP(6),
  PRIMARY KEY (name),
  KEY due (next_at),
  KEY queue_due (queue, next_at),
  CONSTRAINT `{{TABLE}}_sched` CHECK (missed_max >= 1
    AND max_attempts >= 1 AND (job_key IS NULL OR job_key <> ''))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq schedules 1';

-- The ledger: one row per schedule and instant fired (job: the run it
-- pushed; NULL: a missed instant skipped by the policy). Its primary key
-- is what makes one run per schedule and instant: an insert, checked by
-- the server and certified on Galera. Archive and purge of the runs
-- leave it; a schedule removed leaves it too (added again, the same
-- name never fires an instant fired before). manual: mq schedule run,
-- at the instant it was asked (never one of the expression's).
CREATE TABLE IF NOT EXISTS `{{TABLE}}_fired` (
  schedule      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  manual        TINYINT NOT NULL DEFAULT 0,
  instant       DATETIME(6) NOT NULL,
  job           BIGINT UNSIGNED NULL,
  fired_at      DATETIME(6) NOT NULL DEFAULT UTC_TIMESTAMP(6),
  PRIMARY KEY (schedule, manual, instant),
  -- which schedule and instant a job runs (mq show, mq why of a run)
  KEY job (job)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq fired 1';

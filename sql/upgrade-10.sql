-- mq schema upgrade 9 -> 10: limits (mq-limit(1)). The job key (a new
-- column, NULL for every job there is: no limit counts them by key) and
-- the index a limited claim counts live leases by; the limits of a
-- queue in <table>_queues; the gates and ticks of limited queues, new
-- tables; the key in the archive. The ALTER of the job table adds an
-- index: it reads the whole table (online: jobs are pushed and claimed
-- meanwhile on one server; on a cluster DDL runs in total order and
-- holds every node for that time). The limits' columns in
-- <table>_queues and the key in the archive come first, each one ALTER
-- that mq init runs before this script and skips when its columns are
-- there already (a script cut short is run again from the top; see
-- lib/schema.c, limits_10). Stop the consumers of the old mq first:
-- they refuse a version 10 table, and they would not obey limits.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_gates` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  gate_key      VARBINARY(255) NOT NULL,
  claims        BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, gate_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq gates 1';

CREATE TABLE IF NOT EXISTS `{{TABLE}}_ticks` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  gate_key      VARBINARY(255) NOT NULL,
  n             INT UNSIGNED NOT NULL,
  at            DATETIME(6) NOT NULL,
  PRIMARY KEY (queue, gate_key, n),
  -- the gate's oldest tick, which a claim takes over
  KEY oldest (queue, gate_key, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq ticks 1';

ALTER TABLE `{{TABLE}}`
  ADD COLUMN job_key VARBINARY(255) NULL AFTER every_anchor,
  ADD KEY held (queue, state, job_key, leased_until),
  ADD CONSTRAINT `{{TABLE}}_key` CHECK (job_key IS NULL OR job_key <> ''),
  COMMENT='mq schema 10';

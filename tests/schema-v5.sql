-- mq schema version 5, as mq made it before the CHECK constraints and the
-- UTC defaults (issue 15): a fixture for the 5 -> 6 upgrade test (t010).
-- Not installed.

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
  available_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  leased_until  DATETIME(6) NULL,
  -- written fresh by every claim; ack, fail and extend must present it
  lease_token   CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL,
  -- host:pid of the claiming process
  leased_by     VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
  created_at    DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  finished_at   DATETIME(6) NULL,
  -- bytes, truncated by mq: recording a failure must never fail
  last_error    BLOB NULL,
  dedup_key     VARBINARY(255) NULL,
  -- the key while the job is live, NULL once finished: frees the key
  dedup_live    VARBINARY(255) AS (IF(state IN ('ready', 'leased'), dedup_key, NULL)) STORED,
  -- recurring jobs: an ack makes the job due again at the first
  -- every_anchor + k * every_us after now instead of done; NULL: once
  every_us      BIGINT NULL,
  every_anchor  DATETIME(6) NULL,
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
  UNIQUE KEY dedup (queue, dedup_live),
  -- the recurring jobs alone, for stats
  KEY recurring (every_us, queue, state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq schema 5';

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
  archived_at   DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  KEY finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq archive 1';

-- one row per queue that has settings; no row: defaults (not paused)
CREATE TABLE IF NOT EXISTS `{{TABLE}}_queues` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  paused        TINYINT NOT NULL DEFAULT 0,
  paused_at     DATETIME(6) NULL,
  PRIMARY KEY (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq queues 2';

-- Finished jobs per queue, kept by the writes that finish, archive or
-- bury them, in the same transaction, so that mq stats reads a few rows
-- here instead of every finished job's index entry. state: 'done' and
-- 'dead' count the job table's finished jobs, 'archived' the archive's.
-- A count is the sum of its slots: each session adds to its own
-- (CONNECTION_ID() % 16), so concurrent consumers seldom wait on one
-- row. Rows changed by hand are not counted: `mq stats --recount`.
-- mq init fills the counts from the tables, then drops ', to fill' from
-- the comment; a table made by hand from this text is filled by the next
-- mq init.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_counts` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state         ENUM('done', 'dead', 'archived') NOT NULL,
  slot          TINYINT UNSIGNED NOT NULL,
  n             BIGINT NOT NULL,
  PRIMARY KEY (queue, state, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq counts 1, to fill';

-- mq schema version 4, as mq made it before the counts of finished jobs
-- (issue 6): a fixture for the 4 -> 5 upgrade test (t010). Not installed.

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
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq schema 4';

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

-- mq schema upgrade 11 -> 12: calendar schedules (mq-schedule(1)). Two
-- new tables, the schedules and the ledger of what fired; the job table
-- is unchanged but for the version in its comment (nothing is copied).
-- Stop the consumers of the old mq first: they refuse a version 12
-- table.
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

ALTER TABLE `{{TABLE}}` COMMENT='mq schema 12';

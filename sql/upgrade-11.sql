-- mq schema upgrade 10 -> 11: dependencies (mq push --after). Three
-- columns at the end of the job table (an instant change on MariaDB
-- 10.3+ and MySQL 8.0: no copy of the rows; NULL in every job there
-- is: no dependents, no parents), and two new tables. Stop the consumers of
-- the old mq first: they refuse a version 11 table, and their finishes
-- would not make dependents due.
CREATE TABLE IF NOT EXISTS `{{TABLE}}_deps` (
  parent        BIGINT UNSIGNED NOT NULL,
  child         BIGINT UNSIGNED NOT NULL,
  met           TINYINT NOT NULL DEFAULT 0,
  on_death      ENUM('cancel', 'run', 'wait') NOT NULL,
  PRIMARY KEY (parent, child),
  KEY child (child, parent)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq deps 1';

CREATE TABLE IF NOT EXISTS `{{TABLE}}_waits` (
  child         BIGINT UNSIGNED NOT NULL,
  shard         SMALLINT UNSIGNED NOT NULL,
  parents       INT UNSIGNED NOT NULL,
  PRIMARY KEY (child, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq waits 1';

ALTER TABLE `{{TABLE}}`
  ADD COLUMN children INT UNSIGNED NULL,
  ADD COLUMN parent_shards INT UNSIGNED NULL,
  ADD COLUMN if_parent_dies ENUM('cancel', 'run', 'wait') NULL,
  COMMENT='mq schema 11';

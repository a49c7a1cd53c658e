-- mq schema upgrade 6 -> 7: the history of attempts, counters next to
-- the counts, and the index list for mq ls (see schema.sql). `mq init` runs this on a version 6
-- table. The counts table gets its new column and states first, in one
-- ALTER that mq init skips when the column is already there (a script
-- cut short is run again from the top), then the done, dead and
-- archived counters start from their counts, the others at 0.
-- Stop the consumers of the old mq first: they refuse a version 7 table.

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

-- the index mq ls pages a queue's state by, and the version, in one
-- ALTER: built in place (writers go on), all or nothing
ALTER TABLE `{{TABLE}}` ADD KEY list (queue, state), COMMENT='mq schema 7';

-- mq schema upgrade 8 -> 9: the waiters table, through which a push on
-- one node of a Galera cluster wakes consumers waiting on the others
-- (mq-queue(7) WAITERS). A new table, and the version in the job
-- table's comment (no row is copied: instant). Consumers of the old mq
-- refuse a version 9 table: stop them first.
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

ALTER TABLE `{{TABLE}}` COMMENT='mq schema 9';

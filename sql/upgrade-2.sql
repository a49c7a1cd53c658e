-- mq schema upgrade 1 -> 2: the queues' settings table (pause/resume).
-- `mq init` runs this on a version 1 table, then records version 2.

CREATE TABLE IF NOT EXISTS `{{TABLE}}_queues` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  paused        TINYINT NOT NULL DEFAULT 0,
  paused_at     DATETIME(6) NULL,
  PRIMARY KEY (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq queues 2';

ALTER TABLE `{{TABLE}}` COMMENT='mq schema 2';

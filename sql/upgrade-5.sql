-- mq schema upgrade 4 -> 5: the counts of finished jobs, so that
-- mq stats reads a few rows instead of every finished job's index entry.
-- `mq init` runs this on a version 4 table, then fills the counts from
-- the tables (as `mq stats --recount` does) and drops ', to fill' from
-- the counts table's comment: cut short, the next mq init fills them.
-- Stop the consumers of the old mq first: finishing jobs without counting
-- them, they would leave the counts short until `mq stats --recount`.

CREATE TABLE IF NOT EXISTS `{{TABLE}}_counts` (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state         ENUM('done', 'dead', 'archived') NOT NULL,
  slot          TINYINT UNSIGNED NOT NULL,
  n             BIGINT NOT NULL,
  PRIMARY KEY (queue, state, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='mq counts 1, to fill';

ALTER TABLE `{{TABLE}}` COMMENT='mq schema 5';

-- mq schema upgrade 2 -> 3: recurring jobs (mq push --every).
-- `mq init` runs this on a version 2 table. One statement, which records
-- version 3 as it adds the columns: all of it happens or none.
-- (The archive keeps no recurrence: it holds what ran.)

ALTER TABLE `{{TABLE}}`
  ADD COLUMN every_us BIGINT NULL,
  ADD COLUMN every_anchor DATETIME(6) NULL,
  ADD KEY recurring (every_us, queue, state),
  COMMENT='mq schema 3';

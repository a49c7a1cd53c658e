-- mq schema upgrade 3 -> 4: the due index, so that a claim that finds
-- nothing due costs one probe however many jobs are scheduled for later.
-- `mq init` runs this on a version 3 table. One statement, which records
-- version 4 as it adds the index: all of it happens or none. (InnoDB
-- builds the index in place; writes go on while it does.)

ALTER TABLE `{{TABLE}}`
  ADD KEY due (queue, state, available_at),
  COMMENT='mq schema 4';

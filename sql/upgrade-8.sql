-- mq schema upgrade 7 -> 8: the dedup key, unique over one column. On a
-- Galera cluster a unique key is a certification key of every write to
-- a row, and the old key (queue, dedup_live) gave every job of a queue
-- without a live dedup key the same one (its NULL is not part of it):
-- writes on disjoint jobs failed certification against each other. The
-- new column is NULL as a whole when the job has no live key, and a NULL
-- key certifies nothing. The queue comes first, then '/', which no
-- queue name holds: a key is unique per queue, as before. dedup_live
-- stays (programs may read it). `mq init` runs this on a version 7 table:
-- one ALTER, all or nothing; it copies the table (a stored column is
-- computed for every row), so run it when the queue is quiet, and on a
-- cluster it holds every node for that time (DDL runs in total order).
-- Stop the consumers of the old mq first: they refuse a version 8 table.

ALTER TABLE `{{TABLE}}`
  ADD COLUMN dedup_unique VARBINARY(320) AS (IF(state IN ('ready', 'leased')
    AND dedup_key IS NOT NULL, CONCAT(queue, '/', dedup_key), NULL)) STORED
    AFTER dedup_live,
  DROP KEY dedup, ADD UNIQUE KEY dedup (dedup_unique),
  COMMENT='mq schema 8';

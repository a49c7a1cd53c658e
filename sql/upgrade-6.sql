-- mq schema upgrade 5 -> 6: defaults that are UTC in every session, and
-- CHECK constraints that refuse rows no mq would write (see schema.sql).
-- `mq init` runs this on a version 5 table, then recounts the finished
-- jobs (the repairs below may bury or finish some).
--
-- First the rows the constraints would refuse are repaired, each as mq
-- would have handled it (every UPDATE finds nothing the second time, so
-- a script cut short is run again from the top). Rows whose queue name mq
-- does not accept cannot be repaired: mq init refuses the upgrade before
-- this script runs and names them. Then one ALTER TABLE adds the
-- constraints and the defaults and records version 6: all of it happens
-- or none. It copies the table (CHECK constraints are not added in
-- place): writers wait while it runs.

-- a state that is not one of mq's ('', from a non-strict session): buried
UPDATE `{{TABLE}}` SET state = 'dead', leased_until = NULL,
  finished_at = COALESCE(finished_at, UTC_TIMESTAMP(6)),
  last_error = 'mq init: invalid state, buried'
  WHERE state NOT IN ('ready', 'leased', 'done', 'dead');

-- zero dates: a due time is now, a creation time the due time, a finished
-- job's time now; a lease ends now (requeue-stale takes it back)
UPDATE `{{TABLE}}` SET available_at = UTC_TIMESTAMP(6)
  WHERE available_at < '1000-01-01';
UPDATE `{{TABLE}}` SET created_at = available_at
  WHERE created_at < '1000-01-01';
UPDATE `{{TABLE}}` SET leased_until = UTC_TIMESTAMP(6)
  WHERE leased_until < '1000-01-01';
UPDATE `{{TABLE}}` SET finished_at = UTC_TIMESTAMP(6)
  WHERE finished_at < '1000-01-01';
UPDATE `{{TABLE}}` SET every_anchor = available_at
  WHERE every_anchor < '1000-01-01';

-- a lease without a deadline or without a token can never be reaped or
-- acked: it is taken back now, as requeue-stale takes back an expired one
UPDATE `{{TABLE}}` SET
  state = IF(attempts >= max_attempts, 'dead', 'ready'),
  finished_at = IF(attempts >= max_attempts, UTC_TIMESTAMP(6), NULL),
  last_error = IF(attempts >= max_attempts,
    'lease without deadline or token; attempts used up', last_error),
  available_at = IF(attempts >= max_attempts, available_at,
    UTC_TIMESTAMP(6)),
  leased_until = NULL
  WHERE state = 'leased' AND (leased_until IS NULL OR lease_token IS NULL);

-- a finished job without its time: finished now
UPDATE `{{TABLE}}` SET finished_at = UTC_TIMESTAMP(6)
  WHERE state IN ('done', 'dead') AND finished_at IS NULL;

-- attempts: max_attempts 0 becomes 1; attempts beyond max_attempts raise
-- it, so that each job gets exactly the deliveries schema 5 gave it (a
-- waiting one, one more; the others none). Left to right: max_attempts is
-- computed from the old attempts.
UPDATE `{{TABLE}}` SET max_attempts = 1 WHERE max_attempts = 0;
UPDATE `{{TABLE}}` SET max_attempts = LEAST(attempts, 4294967294) + 1,
  attempts = LEAST(attempts, 4294967294)
  WHERE state = 'ready' AND attempts >= max_attempts;
UPDATE `{{TABLE}}` SET max_attempts = attempts
  WHERE state <> 'ready' AND attempts > max_attempts;

-- a period of 0 or less made ack fail or the job due at once for ever:
-- the job runs once more and is done; a period without an anchor counts
-- from the job's due time
UPDATE `{{TABLE}}` SET every_us = NULL, every_anchor = NULL
  WHERE every_us <= 0;
UPDATE `{{TABLE}}` SET every_anchor = available_at
  WHERE every_us IS NOT NULL AND every_anchor IS NULL;

ALTER TABLE `{{TABLE}}_archive`
  MODIFY archived_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6));

ALTER TABLE `{{TABLE}}`
  MODIFY available_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  MODIFY created_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  ADD CONSTRAINT `{{TABLE}}_queue` CHECK (queue REGEXP '^[A-Za-z0-9_.-]+$'),
  ADD CONSTRAINT `{{TABLE}}_state`
    CHECK (state IN ('ready', 'leased', 'done', 'dead')),
  ADD CONSTRAINT `{{TABLE}}_tries` CHECK (max_attempts >= 1
    AND attempts <= max_attempts
    AND (state <> 'ready' OR attempts < max_attempts)),
  ADD CONSTRAINT `{{TABLE}}_times` CHECK (available_at >= '1000-01-01'
    AND created_at >= '1000-01-01'
    AND (leased_until IS NULL OR leased_until >= '1000-01-01')
    AND (finished_at IS NULL OR finished_at >= '1000-01-01')
    AND (every_anchor IS NULL OR every_anchor >= '1000-01-01')),
  ADD CONSTRAINT `{{TABLE}}_lease` CHECK (state <> 'leased'
    OR (leased_until IS NOT NULL AND lease_token IS NOT NULL)),
  ADD CONSTRAINT `{{TABLE}}_done`
    CHECK (state IN ('ready', 'leased') OR finished_at IS NOT NULL),
  ADD CONSTRAINT `{{TABLE}}_every` CHECK (every_us IS NULL
    OR (every_us > 0 AND every_anchor IS NOT NULL)),
  COMMENT='mq schema 6';

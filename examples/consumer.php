#!/usr/bin/php
<?php
/*
 * consumer.php: claim one job from mq's table with plain SQL, as
 * mq-sql(7) documents it, write its payload, and ack it; or fail it.
 *
 * usage: consumer.php [--queue Q] [--claim skip-locked|update] [--lease S]
 *                     [--output F] [--extend S] [--fail TEXT [--retry-in S]
 *                     [--no-retry]] [--wait-file F] [--lock-wait S]
 *                     [--confirm-host H [--confirm-port N]]
 *                     [--confirm-socket S] [connection options]
 *
 * The payload goes to F (default: standard output), byte for byte, then
 * the job is acked. With --fail the job is failed instead, with TEXT as
 * its error: due again after --retry-in seconds (default: mq's backoff),
 * or dead with --no-retry or once its attempts are used up. --extend
 * moves the lease to S seconds from now before the work (a heartbeat).
 * --wait-file waits, once the job is claimed, until F exists (to show a
 * consumer whose lease ran out). The receipt (id.token) and what became
 * of the job go to standard error.
 *
 * On a Galera cluster a node may lose a claim it reported committed, and
 * another consumer then runs the job too (mq-galera(7), CLAIMS CONFIRMED
 * ON ANOTHER NODE). Name another node of the cluster, the confirming
 * node, with --confirm-host H (--confirm-port N: default MYSQL_TCP_PORT,
 * else 3306) or --confirm-socket S (used without --confirm-host, or with
 * localhost), or MQ_CONFIRM_HOST, MQ_CONFIRM_PORT, MQ_CONFIRM_SOCKET (not
 * the option files: they name the first node); it is reached with the
 * same user, password and database, its session set up as the first's.
 * The job is then run (or failed) only once that node shows its claim
 * (mq-sql(7), CLAIMING A JOB). The node is checked before the claim: one
 * that cannot be connected to, is not ready in the primary component, is
 * of another cluster or is the claim's own node fails the consumer, with
 * nothing claimed (69). A claim it does not show, once it caught up, is
 * neither run nor acked (3): the cluster lost it, or the lease was taken
 * back; its lease ends as a lost consumer's does. Without a confirming
 * node, a claim the cluster lost may be run. On a server that is not a
 * Galera node the confirming node is not used (not connected to): there
 * is no cluster to lose a claim.
 *
 * Exit status (mq's, mq(1) EXIT STATUS): 0 done, 1 nothing to claim, 2
 * the lease was lost (the job was requeued and claimed again, or finished:
 * this consumer's ack or fail changed nothing), 3 the confirming node
 * does not show the claim (the job not run), 64 usage, 69 cannot connect
 * (or the connection was lost), or the confirming node cannot be used or
 * read, 70 another server error, 74 I/O
 * error, 75 deadlocks or lock wait timeouts after retries, 77 access
 * denied, 78 no database selected, an option file that cannot be read,
 * not an mq table, or statement logging this account cannot turn to rows.
 * --lock-wait: a row lock is waited for S seconds (default 50, as mq),
 * then retried.
 * The runs of calendar schedules (mq-schedule(1)) are jobs like any other;
 * this program does not fire schedules (SQL cannot compute a cron instant):
 * where only it consumes a queue, run `mq schedule fire` from a timer.
 * Connection as producer.php. Debian: apt-get install php-cli php-mysql.
 */

require_once __DIR__ . '/mq_session.php';

/* The statements of mq-sql(7), word for word (t330 checks that they are
 * there); those of the session are in mq_session.php. `mq_jobs` is the
 * default table: run() puts the one asked for in its place. */
const SQL_CLAIM_SELECT = <<<'SQL'
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)
   AND NOT EXISTS (SELECT 1 FROM `mq_jobs_queues`
                    WHERE queue = ? AND (paused OR (concurrency >= 1
                      OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
                      OR (key_rate >= 1 AND key_rate_us >= 1))))
   AND EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
 ORDER BY priority, available_at, id LIMIT ?
   FOR UPDATE SKIP LOCKED
SQL;
const SQL_CLAIM_LEASE = <<<'SQL'
UPDATE `mq_jobs` SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE id IN (?)
SQL;
const SQL_ANY_DUE = <<<'SQL'
SELECT EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
SQL;
const SQL_CLAIM_UPDATE = <<<'SQL'
UPDATE `mq_jobs` FORCE INDEX (claim) SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE queue = ? AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)
   AND NOT EXISTS (SELECT 1 FROM `mq_jobs_queues`
                    WHERE queue = ? AND (paused OR (concurrency >= 1
                      OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
                      OR (key_rate >= 1 AND key_rate_us >= 1))))
 ORDER BY priority, available_at, id LIMIT ?
SQL;
const SQL_CLAIM_READ = <<<'SQL'
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'leased' AND lease_token = ?
 ORDER BY priority, available_at, id
SQL;
const SQL_ACK = <<<'SQL'
UPDATE `mq_jobs` SET
 state = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor))
   AND every_us <=
   TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '9999-12-31 23:59:59')),
   'ready', 'done'),
 finished_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), NULL, UTC_TIMESTAMP(6)),
 available_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')),
   every_anchor + INTERVAL IF(TIMESTAMPDIFF(MICROSECOND, every_anchor,
   UTC_TIMESTAMP(6)) < 0, 0,
   TIMESTAMPDIFF(MICROSECOND, every_anchor, UTC_TIMESTAMP(6))
   DIV every_us + 1) * every_us
   MICROSECOND, available_at),
 attempts = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), 0, attempts),
 leased_until = NULL,
 every_us = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), every_us, NULL),
 every_anchor = IF(every_us IS NULL, NULL, every_anchor)
 WHERE id = ? AND lease_token = ? AND state = 'leased'
SQL;
/* A job with dependents (schema 11, mq-sql(7) DEPENDENCIES): the ack
 * tries the UPDATE for a job without any first; the finish of one that
 * has some meets its edges (four statements), and a dead one's cancels
 * the dependents that die with it, and theirs in turn. */
const SQL_ACK_CHILDLESS = <<<'SQL'
UPDATE `mq_jobs` SET
 state = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor))
   AND every_us <=
   TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '9999-12-31 23:59:59')),
   'ready', 'done'),
 finished_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), NULL, UTC_TIMESTAMP(6)),
 available_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')),
   every_anchor + INTERVAL IF(TIMESTAMPDIFF(MICROSECOND, every_anchor,
   UTC_TIMESTAMP(6)) < 0, 0,
   TIMESTAMPDIFF(MICROSECOND, every_anchor, UTC_TIMESTAMP(6))
   DIV every_us + 1) * every_us
   MICROSECOND, available_at),
 attempts = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), 0, attempts),
 leased_until = NULL,
 every_us = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), every_us, NULL),
 every_anchor = IF(every_us IS NULL, NULL, every_anchor)
 WHERE id = ? AND lease_token = ? AND state = 'leased'
   AND children IS NULL
SQL;
const SQL_MEET_SHARDS = <<<'SQL'
UPDATE (SELECT d.child, d.parent % 1024 AS shard, COUNT(*) AS n
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY) WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)
  GROUP BY d.child, d.parent % 1024) e
  STRAIGHT_JOIN `mq_jobs_waits` w
  ON w.child = e.child AND w.shard = e.shard
  SET w.parents = w.parents - e.n
SQL;
const SQL_MEET_PARENTS = <<<'SQL'
UPDATE (SELECT w.child, COUNT(*) AS n FROM (SELECT DISTINCT d.child,
  d.parent % 1024 AS shard FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)) e
  STRAIGHT_JOIN `mq_jobs_waits` w
  ON w.child = e.child AND w.shard = e.shard
  WHERE w.parents = 0 GROUP BY w.child) z
  STRAIGHT_JOIN `mq_jobs` j ON j.id = z.child
  SET j.parent_shards = j.parent_shards - z.n
SQL;
const SQL_MEET_RELEASE = <<<'SQL'
UPDATE (SELECT DISTINCT d.child
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  WHERE d.met = 0 AND (? OR d.on_death = 'run')
  AND d.parent IN (?)) e STRAIGHT_JOIN `mq_jobs` j ON j.id = e.child
  SET j.available_at = UTC_TIMESTAMP(6)
  WHERE j.parent_shards = 0 AND j.state = 'ready'
  AND j.available_at = '9999-12-31 23:59:59.999999'
SQL;
const SQL_MEET_MARK = <<<'SQL'
UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY) SET d.met = 1
  WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)
SQL;
const SQL_HAS_DEPENDENTS = <<<'SQL'
SELECT id, state = 'dead' FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE children IS NOT NULL AND id IN (?)
SQL;
const SQL_DOOMED = <<<'SQL'
SELECT d.child, d.parent, j.children IS NOT NULL
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  STRAIGHT_JOIN `mq_jobs` j ON j.id = d.child
  WHERE (d.parent > ? OR (d.parent = ? AND d.child > ?)) AND d.met = 0
  AND (d.on_death = 'cancel' OR (? AND d.on_death = 'wait'))
  AND j.state = 'ready' AND j.parent_shards > 0
  AND d.parent IN (?)
  ORDER BY d.parent, d.child LIMIT 1000 FOR UPDATE
SQL;
const SQL_CANCEL = <<<'SQL'
UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  STRAIGHT_JOIN `mq_jobs` j ON j.id = d.child
  SET j.state = 'dead', j.finished_at = UTC_TIMESTAMP(6),
  j.available_at = UTC_TIMESTAMP(6),
  j.last_error = CONCAT('cancelled: parent ', d.parent,
  IF(?, ' was purged', ' is dead'))
  WHERE d.met = 0 AND (d.on_death = 'cancel'
  OR (? AND d.on_death = 'wait')) AND j.state = 'ready'
  AND j.parent_shards > 0 AND (d.parent, d.child) IN ((?, ?))
SQL;
// The counts' slot is CONNECTION_ID() % 16 plus this: any slot keeps the
// counts exact; mq adds 16 times its Galera node's index (0 on one
// server) so that two nodes never write one count row (mq(1) GALERA).
const SLOT_BASE = 0;

const SQL_COUNT_FINISHED = <<<'SQL'
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, COALESCE(?, CAST(state AS CHAR)), CONNECTION_ID() % 16 + ?,
       ? * COUNT(*), IF(? > 0, COUNT(*), 0)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state IN ('done', 'dead') AND id IN (?)
 GROUP BY queue, state ORDER BY queue, state
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
SQL;
const SQL_LOCK = <<<'SQL'
SELECT attempts, max_attempts FROM `mq_jobs`
 WHERE id = ? AND lease_token = ? AND state = 'leased' FOR UPDATE
SQL;
const SQL_RETRY = <<<'SQL'
UPDATE `mq_jobs` SET state = 'ready', leased_until = NULL,
       available_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       last_error = COALESCE(?, last_error)
 WHERE id = ?
SQL;
const SQL_BURY = <<<'SQL'
UPDATE `mq_jobs` SET state = 'dead', leased_until = NULL,
       finished_at = UTC_TIMESTAMP(6),
       last_error = COALESCE(?, last_error)
 WHERE id = ?
SQL;
const SQL_HISTORY = <<<'SQL'
INSERT INTO `mq_jobs_history`
       (job_id, event, state, attempt, at, worker, error)
SELECT id, ?, IF(state = 'dead', 'dead', 'ready'), attempts,
       UTC_TIMESTAMP(6), leased_by, ?
  FROM `mq_jobs` FORCE INDEX (PRIMARY) WHERE id IN (?) ORDER BY id
SQL;
const SQL_COUNT_EVENT = <<<'SQL'
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, ?, CONNECTION_ID() % 16 + ?, COUNT(*), COUNT(*)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE (? IS NULL OR queue = ?) AND id IN (?)
 GROUP BY queue ORDER BY queue
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
SQL;
const SQL_JOB_LIMITS = <<<'SQL'
SELECT j.queue, j.job_key, l.concurrency, l.per_key
  FROM `mq_jobs` AS j FORCE INDEX (PRIMARY)
  LEFT JOIN `mq_jobs_queues` AS l ON l.queue = j.queue
 WHERE j.id = ?
SQL;
const SQL_GATE = <<<'SQL'
INSERT INTO `mq_jobs_gates` (queue, gate_key, claims)
VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE claims = claims + 1
SQL;
const SQL_EXTEND = <<<'SQL'
UPDATE `mq_jobs` SET leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
 WHERE id = ? AND (leased_until >= UTC_TIMESTAMP(6) OR NOT EXISTS
       (SELECT 1 FROM `mq_jobs_queues` AS l
         WHERE l.queue = `mq_jobs`.queue AND (concurrency >= 1
           OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
           OR (key_rate >= 1 AND key_rate_us >= 1))))
SQL;
/* A claim confirmed on another Galera node (mq-sql(7), CLAIMING A JOB):
 * who a node is, which cluster's, whether it is ready in the primary
 * component (NULL when it is), and the cluster's size; then, after the
 * claim's COMMIT, the claim read there once that node applied what the
 * cluster committed before the read. */
const SQL_NODE = <<<'SQL'
SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME = 'wsrep_gcomm_uuid'),
       (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME = 'wsrep_cluster_state_uuid'),
       (SELECT GROUP_CONCAT(VARIABLE_NAME, ' ', VARIABLE_VALUE)
          FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME IN ('wsrep_ready', 'wsrep_cluster_status')
           AND VARIABLE_VALUE NOT IN ('ON', 'Primary')),
       (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
         WHERE VARIABLE_NAME = 'wsrep_cluster_size')
SQL;
const SQL_SYNC_WAIT = <<<'SQL'
SET SESSION wsrep_sync_wait = 3
SQL;
const SQL_SEEN = <<<'SQL'
SELECT id FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state = 'leased' AND lease_token = ? AND id IN (?)
SQL;

/* the first schema these statements are right for */
const SCHEMA_MIN = 11;
const ERROR_MAX = 4096;	/* bytes of error text kept, as mq keeps */
const DOOMED_MAX = 1000;	/* dependents SQL_DOOMED locks at a time */

function options(): array
{
	/* a variable set to the empty string counts as unset, as for mq */
	$env = fn($k) => (string)getenv($k) === '' ? null : getenv($k);
	$o = parse_options('consumer.php', ['claim' => 'skip-locked',
	    'lease' => 300.0, 'output' => null, 'extend' => null,
	    'fail' => null, 'retry-in' => null, 'no-retry' => false,
	    'wait-file' => null, 'lock-wait' => 50,
	    'confirm-host' => $env('MQ_CONFIRM_HOST'),
	    'confirm-port' => $env('MQ_CONFIRM_PORT'),
	    'confirm-socket' => $env('MQ_CONFIRM_SOCKET')], ['--no-retry']);
	if ($o['confirm-port'] !== null && (string)$o['confirm-host'] === '')
		usage('consumer.php', '--confirm-port needs --confirm-host');
	if ($o['confirm-port'] !== null &&
	    (!ctype_digit((string)$o['confirm-port']) ||
	    (int)$o['confirm-port'] < 1 || (int)$o['confirm-port'] > 65535))
		usage('consumer.php', '--confirm-port takes 1 to 65535');
	if (!in_array($o['claim'], ['skip-locked', 'update']))
		usage('consumer.php', '--claim is skip-locked or update');
	if ((float)$o['lease'] <= 0 ||
	    ($o['extend'] !== null && (float)$o['extend'] <= 0))
		usage('consumer.php', 'a lease is positive');
	if (!ctype_digit((string)$o['lock-wait']) || (int)$o['lock-wait'] < 1 ||
	    (int)$o['lock-wait'] > 3600)
		usage('consumer.php', '--lock-wait takes 1 to 3600 seconds');
	return $o;
}

/* The confirming node named: [host, socket, port] for connect(), and its
 * name in messages; null if none is. */
function confirm_node(array $o): ?array
{
	$env = fn($k, $d) => (string)getenv($k) === '' ? $d : getenv($k);
	[$host, $sock] = [(string)$o['confirm-host'], (string)$o['confirm-socket']];
	if ($host === '' && $sock === '')
		return null;
	if ($host !== '' && $host !== 'localhost') {
		$port = $o['confirm-port'] ?? $env('MYSQL_TCP_PORT', '3306');
		return [[$host, null, $port], "$host:$port"];
	}
	$sock = $sock !== '' ? $sock : $env('MYSQL_UNIX_PORT',
	    '/run/mysqld/mysqld.sock');
	return [[null, $sock, null], $sock];
}

/* A session on the confirming node, checked before the claim: a member
 * of the primary component, of the claim's node's cluster, not that node
 * (told apart by wsrep_gcomm_uuid, not by a host name: containers share
 * those); null where none is named, or $db's server is not a Galera node
 * (there is no cluster to lose a claim). */
function confirming(MqPDO $db, array &$o): ?PDO
{
	$named = confirm_node($o);
	if ($named === null || !$db->galera)
		return null;
	[$node, $o['confirm-name']] = $named;
	$refuse = fn($why) => new Fail("confirming node {$o['confirm-name']} " .
	    'cannot be used: ' . trim(preg_replace('/\s+/', ' ', $why)), 69);
	$t = $o['table'];
	$me = run($db, SQL_NODE, $t, [])->fetch(PDO::FETCH_NUM);
	/* the same user, password and database */
	$c = $o;
	$c['database'] = $db->database;
	try {
		$other = connect($c, SCHEMA_MIN, (int)$o['lock-wait'], $node);
		$it = run($other, SQL_NODE, $t, [])->fetch(PDO::FETCH_NUM);
	} catch (Fail $e) {
		throw $refuse($e->getMessage());
	} catch (PDOException $e) {
		throw $refuse(db_message($e));
	}
	if ($it[0] === null)
		throw $refuse('not a Galera node');
	if ($it[0] === $me[0])
		throw $refuse("it is the claim's own node (wsrep_gcomm_uuid " .
		    "$it[0])");
	if ($it[1] !== $me[1])
		throw $refuse('a node of another cluster ' .
		    "(wsrep_cluster_state_uuid $it[1], not $me[1])");
	if ($it[2] !== null)
		throw $refuse("not ready ($it[2])");
	return $other;
}

/* Whether the confirming node shows job id leased with token, read once
 * it applied what the cluster committed before the read. */
function confirmed(PDO $other, array $o, int $id, string $token): bool
{
	$t = $o['table'];
	try {
		run($other, SQL_SYNC_WAIT, $t, []);
		$ids = run($other, SQL_SEEN, $t, [$token, $id])
		    ->fetchAll(PDO::FETCH_COLUMN, 0);
	} catch (PDOException $e) {
		throw new Fail("cannot read the claim of job $id on the " .
		    "confirming node {$o['confirm-name']}: " . db_message($e), 69);
	}
	return in_array($id, array_map('intval', $ids), true);
}

/* The lease holder as mq writes it (mq-sql(7), CLAIMING A JOB): the
 * host name, its first 199 bytes, each byte outside '!' to '~' as '?'
 * (leased_by is ASCII: a UTF-8 host name made every claim fail with
 * 1366), then ':' and the process id; 255 characters at most. */
function leased_by(): string
{
	$host = gethostname();
	$host = $host === false ? 'unknown' :
	    preg_replace('/[^\x21-\x7e]/', '?', substr($host, 0, 199));
	return substr($host . ':' . getmypid(), 0, 255);
}

/* [id, attempt, payload] of the job claimed with token, or null */
function claim(PDO $db, array $o, string $token): ?array
{
	$t = $o['table'];
	$q = $o['queue'];
	$lease = (int)round((float)$o['lease'] * 1e6);
	$worker = leased_by();
	if ($o['claim'] === 'skip-locked')
		return transaction($db, function () use ($db, $t, $q, $lease,
		    $worker, $token) {
			$row = run($db, SQL_CLAIM_SELECT, $t, [$q, $q, $q, 1])
			    ->fetch(PDO::FETCH_NUM);
			if ($row === false)
				return null;
			$n = run($db, SQL_CLAIM_LEASE, $t, [$token, $lease,
			    $worker, (int)$row[0]])->rowCount();
			if ($n != 1)
				throw new Fail("claim leased $n of 1 rows", 70);
			/* attempts as read before the claim's + 1 */
			return [(int)$row[0], (int)$row[3] + 1, $row[4]];
		});
	$n = transaction($db, function () use ($db, $t, $q, $lease, $worker,
	    $token) {
		/* its own statement: the UPDATE may not read its own table */
		if (!run($db, SQL_ANY_DUE, $t, [$q])->fetchColumn())
			return 0;
		return run($db, SQL_CLAIM_UPDATE, $t, [$token, $lease, $worker,
		    $q, $q, 1])->rowCount();
	}, true);
	if ($n == 0)
		return null;
	/* committed: the job is ours until the lease ends */
	$row = run($db, SQL_CLAIM_READ, $t, [$q, $token])
	    ->fetch(PDO::FETCH_NUM);
	return [(int)$row[0], (int)$row[3], $row[4]];
}

function lost(int $id): Fail
{
	return new Fail("job $id: lease lost (the job was requeued and " .
	    'claimed again, or finished): nothing changed', 2);
}

/* sql for n ids: one ? per id in its IN (?) (mq-sql(7), CONVENTIONS) */
function listed(string $sql, int $n): string
{
	return str_replace('IN (?)', 'IN (' .
	    implode(', ', array_fill(0, $n, '?')) . ')', $sql);
}

/* sql for n pairs: one (?, ?) per pair in its IN ((?, ?)) */
function paired(string $sql, int $n): string
{
	return str_replace('IN ((?, ?))', 'IN (' .
	    implode(', ', array_fill(0, $n, '(?, ?)')) . ')', $sql);
}

/* The edges of job id met: all of them (done 1), or those of the
 * dependents that run anyway (done 0: it is dead); a dependent whose
 * last shard this empties is due now (mq-sql(7), DEPENDENCIES). */
function meet(PDO $db, string $t, int $id, int $done): void
{
	run($db, SQL_MEET_SHARDS, $t, [$done, $id]);
	if (run($db, SQL_MEET_PARENTS, $t, [$done, $id])->rowCount() > 0)
		run($db, SQL_MEET_RELEASE, $t, [$done, $id]);
	run($db, SQL_MEET_MARK, $t, [$done, $id]);
}

/* After the burial and its count, in its transaction: the death of job
 * id applied to its dependents, and the deaths that cancels to theirs
 * (a list, not a recursion). */
function dead_with_dependents(PDO $db, string $t, int $id): void
{
	for ($todo = [$id], $i = 0; $i < count($todo); $i++) {
		$j = $todo[$i];
		$row = run($db, SQL_HAS_DEPENDENTS, $t, [$j])
		    ->fetch(PDO::FETCH_NUM);
		if ($row === false)
			continue;
		$dead = (int)$row[1];
		meet($db, $t, $j, $dead ? 0 : 1);
		if (!$dead)
			continue;
		$last = 0;
		do {
			/* one parent: each dependent in one row, and the
			 * cursor its last one */
			$doomed = array_map('intval', run($db, SQL_DOOMED, $t,
			    [$j, $j, $last, 0, $j])->fetchAll(
			    PDO::FETCH_COLUMN, 0));
			$n = count($doomed);
			if ($n == 0)
				break;
			$edges = [0, 0];
			foreach ($doomed as $c)
				array_push($edges, $j, $c);
			$got = run($db, paired(SQL_CANCEL, $n), $t,
			    $edges)->rowCount();
			if ($got != $n)
				throw new Fail("cannot cancel the dependents of " .
				    "job $j: $got of $n changed");
			run($db, listed(SQL_COUNT_FINISHED, $n), $t,
			    array_merge([null, SLOT_BASE, 1, 1], $doomed));
			array_push($todo, ...$doomed);
			$last = $doomed[$n - 1];
		} while ($n == DOOMED_MAX);
	}
}

function ack(PDO $db, array $o, int $id, string $token): void
{
	$t = $o['table'];
	transaction($db, function () use ($db, $t, $id, $token) {
		/* a job without dependents (nearly all): one UPDATE */
		if (run($db, SQL_ACK_CHILDLESS, $t, [$id, $token])
		    ->rowCount() == 1) {
			run($db, SQL_COUNT_FINISHED, $t,
			    [null, SLOT_BASE, 1, 1, $id]);
			return;
		}
		if (run($db, SQL_ACK, $t, [$id, $token])->rowCount() != 1)
			throw lost($id);
		/* the job and its count commit together: mq stats stays
		 * exact */
		run($db, SQL_COUNT_FINISHED, $t, [null, SLOT_BASE, 1, 1, $id]);
		/* it has dependents: those it was the last parent of are
		 * due */
		meet($db, $t, $id, 1);
	});
}

/* mq's: 10 s doubling per attempt, at most 1 h, times [0.75, 1.25) */
function backoff_us(int $attempts): int
{
	$base = min(10000000 << min(max($attempts - 1, 0), 9), 3600000000);
	return (int)($base * (0.75 + 0.5 * mt_rand() / (mt_getrandmax() + 1)));
}

function fail(PDO $db, array $o, int $id, string $token, string $error):
    string
{
	$t = $o['table'];
	$error = substr($error, 0, ERROR_MAX);
	return transaction($db, function () use ($db, $o, $t, $id, $token,
	    $error) {
		$row = run($db, SQL_LOCK, $t, [$id, $token])
		    ->fetch(PDO::FETCH_NUM);
		if ($row === false)
			throw lost($id);
		[$attempts, $max] = [(int)$row[0], (int)$row[1]];
		if ($o['no-retry'] || $attempts >= $max) {
			run($db, SQL_BURY, $t, [$error, $id]);
			run($db, SQL_HISTORY, $t, ['failed', $error, $id]);
			run($db, SQL_COUNT_FINISHED, $t, [null, SLOT_BASE, 1, 1, $id]);
			dead_with_dependents($db, $t, $id);
			return "dead after attempt $attempts";
		}
		$delay = $o['retry-in'] !== null ?
		    (int)round((float)$o['retry-in'] * 1e6) :
		    backoff_us($attempts);
		run($db, SQL_RETRY, $t, [$delay, $error, $id]);
		run($db, SQL_HISTORY, $t, ['failed', $error, $id]);
		run($db, SQL_COUNT_EVENT, $t,
		    ['failed', SLOT_BASE, null, null, $id]);
		return sprintf('due again in %.3fs (after attempt %d)',
		    $delay / 1e6, $attempts);
	});
}

function extend(PDO $db, array $o, int $id, string $token): void
{
	$t = $o['table'];
	$lease = (int)round((float)$o['extend'] * 1e6);
	transaction($db, function () use ($db, $t, $id, $token, $lease) {
		/* a limited queue's gates first, as a claim writes them: an
		 * extend and a claim that counts the lease ended are then in
		 * one order (mq-sql(7), EXTENDING A LEASE) */
		$l = run($db, SQL_JOB_LIMITS, $t, [$id])->fetch(PDO::FETCH_NUM);
		if ($l !== false && $l[0] !== null) {
			if ($l[2] !== null && (int)$l[2] >= 1)
				run($db, SQL_GATE, $t, [$l[0], '']);
			if ($l[3] !== null && (int)$l[3] >= 1 &&
			    $l[1] !== null && $l[1] !== '')
				run($db, SQL_GATE, $t, [$l[0], $l[1]]);
		}
		if (run($db, SQL_LOCK, $t, [$id, $token])->fetch() === false)
			throw lost($id);
		/* no row changed: the lease expired in a limited queue,
		 * whose slot may be another job's (mq-sql(7)) */
		if (run($db, SQL_EXTEND, $t, [$lease, $id])->rowCount() === 0)
			throw lost($id);
	});
}

$o = options();
exit(main('consumer.php', function () use ($o) {
	$db = connect($o, SCHEMA_MIN, (int)$o['lock-wait']);
	/* Galera, a confirming node named: checked before the claim (one
	 * that cannot be used fails with nothing claimed) */
	$other = confirming($db, $o);
	/* 128 random bits, lowercase hex */
	$token = bin2hex(random_bytes(16));
	$job = claim($db, $o, $token);
	if ($job === null) {
		fwrite(STDERR, "consumer.php: queue {$o['queue']}: " .
		    "nothing to claim\n");
		return 1;
	}
	[$id, $attempt, $payload] = $job;
	fwrite(STDERR, "consumer.php: claimed job $id, attempt $attempt, " .
	    "receipt $id.$token\n");
	/* committed: run only if the confirming node shows the claim */
	if ($other !== null && !confirmed($other, $o, $id, $token))
		throw new Fail("the claim of job $id is not seen on the " .
		    "confirming node ({$o['confirm-name']}) once it caught up: " .
		    'the cluster lost it, or the lease was taken back; not run',
		    3);
	while ($o['wait-file'] !== null && !file_exists($o['wait-file']))
		usleep(20000);
	if ($o['extend'] !== null)
		extend($db, $o, $id, $token);
	if ($o['fail'] !== null) {
		$what = fail($db, $o, $id, $token, $o['fail']);
		fwrite(STDERR, "consumer.php: job $id: $what\n");
		return 0;
	}
	if (file_put_contents($o['output'] ?? 'php://stdout', $payload) !==
	    strlen($payload))
		throw new Fail('cannot write the payload', 74);
	ack($db, $o, $id, $token);
	fwrite(STDERR, "consumer.php: job $id: acked\n");
	return 0;
}));

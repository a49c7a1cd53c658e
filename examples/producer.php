#!/usr/bin/php
<?php
/*
 * producer.php: push one job into mq's table with plain SQL, as
 * mq-sql(7) documents it; mq work or mq pop runs it like any other.
 *
 * usage: producer.php [--queue Q] [--priority N] [--delay S]
 *                     [--max-attempts N] [--dedup KEY] [--every S]
 *                     [--wake] [--file F] [connection options]
 *
 * The payload is the bytes of F, or of standard input, byte for byte.
 * Prints the job's id (with --dedup, the live job's id if one holds the
 * key). Connection, as mq finds it (mq(1), OPTION FILES, ENVIRONMENT):
 * --socket, --host, --port, --user, --database, --defaults-file, else
 * MQ_SOCKET, MQ_HOST, MQ_PORT, MQ_USER, MQ_DATABASE, MQ_DEFAULTS_FILE,
 * else the option files: [client], [client-server], [client-mariadb] and
 * [mq] of /etc/my.cnf, /etc/mysql/my.cnf, $MARIADB_HOME/my.cnf (or
 * $MYSQL_HOME's) and ~/.my.cnf, or of the --defaults-file alone; the
 * password from an option file, else MYSQL_PWD. PDO's
 * MYSQL_ATTR_READ_DEFAULT_FILE and _GROUP do not exist with mysqlnd
 * (Debian's php-mysql), so mq_session.php reads the files itself, as
 * Connector/C does for mq, and takes host, port, socket, user, password
 * and database from them: not their other settings (TLS,
 * connect-timeout), and a group read earlier in a file loses to [mq]
 * even where it comes after it. --table or MQ_TABLE (default mq_jobs),
 * MQ_QUEUE (default "default"). MQ_EXAMPLE_TIME_ZONE sets the session's
 * time zone: it changes nothing. Errors: one line, with mq's exit status
 * (mq(1), EXIT STATUS): 69 cannot connect, 77 access denied, 78 no
 * database selected, an option file that cannot be read or not an mq
 * table, 70 another server error.
 *
 * Debian: apt-get install php-cli php-mysql.
 */

require_once __DIR__ . '/mq_session.php';

/* The statements of mq-sql(7), word for word (t330 checks that they are
 * there); those of the session are in mq_session.php. `mq_jobs` is the
 * default table: run() puts the one asked for in its place. */
const SQL_PUSH = <<<'SQL'
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?)
SQL;
const SQL_PUSH_KEY = <<<'SQL'
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?)
SQL;
const SQL_PUSH_EVERY = <<<'SQL'
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key, every_us, every_anchor)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
SQL;
const SQL_LIVE_KEY = <<<'SQL'
SELECT id, queue FROM `mq_jobs`
 WHERE dedup_unique = CONCAT(?, '/', ?)
SQL;
const SQL_WAITERS = <<<'SQL'
SELECT ID FROM information_schema.PROCESSLIST
 WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
   AND CAST(INFO AS BINARY) LIKE ? ESCAPE '!'
 ORDER BY TIME DESC, ID LIMIT ?
SQL;
const SQL_KILL = <<<'SQL'
KILL QUERY ?
SQL;

/* the first schema these statements are right for */
const SCHEMA_MIN = 8;

function options(): array
{
	$o = parse_options('producer.php', ['priority' => 0, 'delay' => 0.0,
	    'max-attempts' => 10, 'dedup' => null, 'every' => null,
	    'wake' => false, 'file' => null], ['--wake']);
	if ($o['every'] !== null && (float)$o['every'] < 1)
		usage('producer.php', '--every takes 1 second or more');
	if ((float)$o['delay'] < 0 || (int)$o['max-attempts'] < 1)
		usage('producer.php', 'invalid --delay or --max-attempts');
	return $o;
}

/* [id, existed]: the job's id, and whether a live job held the key */
function push(PDO $db, array $o, string $payload): array
{
	$t = $o['table'];
	$delay = (int)round((float)$o['delay'] * 1e6);
	$head = [$o['queue'], (int)$o['priority'], (int)$o['max-attempts'],
	    $delay, $payload];
	if ($o['every'] !== null) {
		$sql = SQL_PUSH_EVERY;
		$args = array_merge($head, [$o['dedup'],
		    (int)round((float)$o['every'] * 1e6), $delay]);
	} elseif ($o['dedup'] !== null) {
		$sql = SQL_PUSH_KEY;
		$args = array_merge($head, [$o['dedup']]);
	} else {
		[$sql, $args] = [SQL_PUSH, $head];
	}
	/* a duplicate key: the live job's id, unless it finished in between
	 * (the key is free again: insert again) */
	for ($i = 0; $i < 3; $i++) {
		try {
			retried(fn() => run($db, $sql, $t, $args));
			return [(int)$db->lastInsertId(), false];
		} catch (PDOException $e) {
			if (code($e) != 1062 || $o['dedup'] === null)
				throw $e;
		}
		$row = run($db, SQL_LIVE_KEY, $t, [$o['queue'], $o['dedup']])
		    ->fetch(PDO::FETCH_NUM);
		if ($row !== false && $row[1] !== $o['queue'])	/* a foreign row */
			throw new Fail("the dedup key is held by job $row[0], which "
			    . "is not of queue '{$o['queue']}'", 70);
		if ($row !== false)
			return [(int)$row[0], true];
	}
	throw new Fail('the dedup key is taken and freed too fast: try again',
	    75);
}

/* Optional: mq's waiters find the job within a second anyway. This ends
 * the marked sleep of one of them now (mq-sql(7), WAKING WAITERS);
 * seeing and ending another user's needs PROCESS and CONNECTION ADMIN. */
function wake(PDO $db, array $o): void
{
	$marker = "/* mq-wait `{$o['table']}` {$o['queue']} */";
	$pattern = '%' . preg_replace('/([_%!])/', '!$1', $marker) . '%';
	$ids = run($db, SQL_WAITERS, $o['table'], [$pattern, 1])
	    ->fetchAll(PDO::FETCH_COLUMN);
	foreach ($ids as $id) {
		try {
			run($db, SQL_KILL, $o['table'], [(int)$id]);
		} catch (PDOException $e) {
			if (code($e) != 1094)	/* it ended by itself */
				throw $e;
		}
	}
}

$o = options();
exit(main('producer.php', function () use ($o) {
	$payload = file_get_contents($o['file'] ?? 'php://stdin');
	if ($payload === false)
		throw new Fail('cannot read the payload', 74);
	$db = connect($o, SCHEMA_MIN);
	[$id, $existed] = push($db, $o, $payload);
	if ($o['wake'] && !$existed && (float)$o['delay'] == 0)
		wake($db, $o);
	echo "$id\n";
	return 0;
}));

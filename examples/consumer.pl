#!/usr/bin/perl
# consumer.pl: claim one job from mq's table with plain SQL, as mq-sql(7)
# documents it, write its payload, and ack it; or fail it.
#
# usage: consumer.pl [--queue Q] [--claim skip-locked|update] [--lease S]
#                    [--output F] [--extend S] [--fail TEXT [--retry-in S]
#                    [--no-retry]] [--wait-file F] [--lock-wait S]
#                    [--confirm-host H [--confirm-port N]]
#                    [--confirm-socket S] [connection options]
#
# The payload goes to F (default: standard output), byte for byte, then
# the job is acked. With --fail the job is failed instead, with TEXT as
# its error: due again after --retry-in seconds (default: mq's backoff),
# or dead with --no-retry or once its attempts are used up. --extend
# moves the lease to S seconds from now before the work (a heartbeat).
# --wait-file waits, once the job is claimed, until F exists (to show a
# consumer whose lease ran out). The receipt (id.token) and what became
# of the job go to standard error.
#
# On a Galera cluster a node may lose a claim it reported committed, and
# another consumer then runs the job too (mq-galera(7), CLAIMS CONFIRMED
# ON ANOTHER NODE). Name another node of the cluster, the confirming
# node, with --confirm-host H (--confirm-port N: default MYSQL_TCP_PORT,
# else 3306) or --confirm-socket S (used without --confirm-host, or with
# localhost), or MQ_CONFIRM_HOST, MQ_CONFIRM_PORT, MQ_CONFIRM_SOCKET (not
# the option files: they name the first node); it is reached with the
# same user, password and database, its session set up as the first's.
# The job is then run (or failed) only once that node shows its claim
# (mq-sql(7), CLAIMING A JOB). The node is checked before the claim: one
# that cannot be connected to, is not ready in the primary component, is
# of another cluster or is the claim's own node fails the consumer, with
# nothing claimed (69). A claim it does not show, once it caught up, is
# neither run nor acked (3): the cluster lost it, or the lease was taken
# back; its lease ends as a lost consumer's does. Without a confirming
# node, a claim the cluster lost may be run. On a server that is not a
# Galera node the confirming node is not used (not connected to): there
# is no cluster to lose a claim.
#
# Exit status (mq's, mq(1) EXIT STATUS): 0 done, 1 nothing to claim, 2
# the lease was lost (the job was requeued and claimed again, or finished:
# this consumer's ack or fail changed nothing), 3 the confirming node
# does not show the claim (the job not run), 64 usage, 69 cannot connect
# (or the connection was lost), or the confirming node cannot be used or
# read, 70 another server error, 74 I/O
# error, 75 deadlocks or lock wait timeouts after retries, 77 access
# denied, 78 no database selected, an option file that cannot be read,
# not an mq table, or statement logging this account cannot turn to rows.
# --lock-wait: a row lock is waited for S seconds (default 50, as mq),
# then retried.
# The runs of calendar schedules (mq-schedule(1)) are jobs like any other;
# this program does not fire schedules (SQL cannot compute a cron instant):
# where only it consumes a queue, run `mq schedule fire` from a timer.
# Connection as producer.pl. Debian: apt-get install libdbd-mysql-perl.
use strict;
use warnings;
use FindBin qw($RealBin);
use lib $RealBin;
use MqSession;
use Sys::Hostname qw(hostname);
use Time::HiRes qw(sleep);

# The statements of mq-sql(7), word for word (t330 checks that they are
# there); those of the session are in MqSession.pm. `mq_jobs` is the
# default table: run() puts the one asked for in its place.
use constant SQL_CLAIM_SELECT => <<'SQL';
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
SQL
use constant SQL_CLAIM_LEASE => <<'SQL';
UPDATE `mq_jobs` SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE id IN (?)
SQL
use constant SQL_ANY_DUE => <<'SQL';
SELECT EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
SQL
use constant SQL_CLAIM_UPDATE => <<'SQL';
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
SQL
use constant SQL_CLAIM_READ => <<'SQL';
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'leased' AND lease_token = ?
 ORDER BY priority, available_at, id
SQL
use constant SQL_ACK => <<'SQL';
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
SQL
# A job with dependents (schema 11, mq-sql(7) DEPENDENCIES): the ack
# tries the UPDATE for a job without any first; the finish of one that
# has some meets its edges (four statements), and a dead one's cancels
# the dependents that die with it, and theirs in turn.
use constant SQL_ACK_CHILDLESS => <<'SQL';
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
SQL
use constant SQL_MEET_SHARDS => <<'SQL';
UPDATE (SELECT d.child, d.parent % 1024 AS shard, COUNT(*) AS n
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY) WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)
  GROUP BY d.child, d.parent % 1024) e
  STRAIGHT_JOIN `mq_jobs_waits` w
  ON w.child = e.child AND w.shard = e.shard
  SET w.parents = w.parents - e.n
SQL
use constant SQL_MEET_PARENTS => <<'SQL';
UPDATE (SELECT w.child, COUNT(*) AS n FROM (SELECT DISTINCT d.child,
  d.parent % 1024 AS shard FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)) e
  STRAIGHT_JOIN `mq_jobs_waits` w
  ON w.child = e.child AND w.shard = e.shard
  WHERE w.parents = 0 GROUP BY w.child) z
  STRAIGHT_JOIN `mq_jobs` j ON j.id = z.child
  SET j.parent_shards = j.parent_shards - z.n
SQL
use constant SQL_MEET_RELEASE => <<'SQL';
UPDATE (SELECT DISTINCT d.child
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  WHERE d.met = 0 AND (? OR d.on_death = 'run')
  AND d.parent IN (?)) e STRAIGHT_JOIN `mq_jobs` j ON j.id = e.child
  SET j.available_at = UTC_TIMESTAMP(6)
  WHERE j.parent_shards = 0 AND j.state = 'ready'
  AND j.available_at = '9999-12-31 23:59:59.999999'
SQL
use constant SQL_MEET_MARK => <<'SQL';
UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY) SET d.met = 1
  WHERE d.met = 0
  AND (? OR d.on_death = 'run') AND d.parent IN (?)
SQL
use constant SQL_HAS_DEPENDENTS => <<'SQL';
SELECT id, state = 'dead' FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE children IS NOT NULL AND id IN (?)
SQL
use constant SQL_DOOMED => <<'SQL';
SELECT d.child, d.parent, j.children IS NOT NULL
  FROM `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  STRAIGHT_JOIN `mq_jobs` j ON j.id = d.child
  WHERE (d.parent > ? OR (d.parent = ? AND d.child > ?)) AND d.met = 0
  AND (d.on_death = 'cancel' OR (? AND d.on_death = 'wait'))
  AND j.state = 'ready' AND j.parent_shards > 0
  AND d.parent IN (?)
  ORDER BY d.parent, d.child LIMIT 1000 FOR UPDATE
SQL
use constant SQL_CANCEL => <<'SQL';
UPDATE `mq_jobs_deps` d FORCE INDEX (PRIMARY)
  STRAIGHT_JOIN `mq_jobs` j ON j.id = d.child
  SET j.state = 'dead', j.finished_at = UTC_TIMESTAMP(6),
  j.available_at = UTC_TIMESTAMP(6),
  j.last_error = CONCAT('cancelled: parent ', d.parent,
  IF(?, ' was purged', ' is dead'))
  WHERE d.met = 0 AND (d.on_death = 'cancel'
  OR (? AND d.on_death = 'wait')) AND j.state = 'ready'
  AND j.parent_shards > 0 AND (d.parent, d.child) IN ((?, ?))
SQL
# The counts' slot is CONNECTION_ID() % 16 plus this: any slot keeps the
# counts exact; mq adds 16 times its Galera node's index (0 on one server)
# so that two nodes never write one count row (mq(1) GALERA).
use constant SLOT_BASE => 0;

use constant SQL_COUNT_FINISHED => <<'SQL';
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, COALESCE(?, CAST(state AS CHAR)), CONNECTION_ID() % 16 + ?,
       ? * COUNT(*), IF(? > 0, COUNT(*), 0)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state IN ('done', 'dead') AND id IN (?)
 GROUP BY queue, state ORDER BY queue, state
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
SQL
use constant SQL_LOCK => <<'SQL';
SELECT attempts, max_attempts FROM `mq_jobs`
 WHERE id = ? AND lease_token = ? AND state = 'leased' FOR UPDATE
SQL
use constant SQL_RETRY => <<'SQL';
UPDATE `mq_jobs` SET state = 'ready', leased_until = NULL,
       available_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       last_error = COALESCE(?, last_error)
 WHERE id = ?
SQL
use constant SQL_BURY => <<'SQL';
UPDATE `mq_jobs` SET state = 'dead', leased_until = NULL,
       finished_at = UTC_TIMESTAMP(6),
       last_error = COALESCE(?, last_error)
 WHERE id = ?
SQL
use constant SQL_HISTORY => <<'SQL';
INSERT INTO `mq_jobs_history`
       (job_id, event, state, attempt, at, worker, error)
SELECT id, ?, IF(state = 'dead', 'dead', 'ready'), attempts,
       UTC_TIMESTAMP(6), leased_by, ?
  FROM `mq_jobs` FORCE INDEX (PRIMARY) WHERE id IN (?) ORDER BY id
SQL
use constant SQL_COUNT_EVENT => <<'SQL';
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, ?, CONNECTION_ID() % 16 + ?, COUNT(*), COUNT(*)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE (? IS NULL OR queue = ?) AND id IN (?)
 GROUP BY queue ORDER BY queue
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
SQL
use constant SQL_JOB_LIMITS => <<'SQL';
SELECT j.queue, j.job_key, l.concurrency, l.per_key
  FROM `mq_jobs` AS j FORCE INDEX (PRIMARY)
  LEFT JOIN `mq_jobs_queues` AS l ON l.queue = j.queue
 WHERE j.id = ?
SQL
use constant SQL_GATE => <<'SQL';
INSERT INTO `mq_jobs_gates` (queue, gate_key, claims)
VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE claims = claims + 1
SQL
use constant SQL_EXTEND => <<'SQL';
UPDATE `mq_jobs` SET leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
 WHERE id = ? AND (leased_until >= UTC_TIMESTAMP(6) OR NOT EXISTS
       (SELECT 1 FROM `mq_jobs_queues` AS l
         WHERE l.queue = `mq_jobs`.queue AND (concurrency >= 1
           OR per_key >= 1 OR (rate >= 1 AND rate_us >= 1)
           OR (key_rate >= 1 AND key_rate_us >= 1))))
SQL

# A claim confirmed on another Galera node (mq-sql(7), CLAIMING A JOB):
# who a node is, which cluster's, whether it is ready in the primary
# component (NULL when it is), and the cluster's size; then, after the
# claim's COMMIT, the claim read there once that node applied what the
# cluster committed before the read.
use constant SQL_NODE => <<'SQL';
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
SQL
use constant SQL_SYNC_WAIT => <<'SQL';
SET SESSION wsrep_sync_wait = 3
SQL
use constant SQL_SEEN => <<'SQL';
SELECT id FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state = 'leased' AND lease_token = ? AND id IN (?)
SQL

use constant ERROR_MAX => 4096;	# bytes of error text kept, as mq keeps
use constant DOOMED_MAX => 1000;	# dependents SQL_DOOMED locks at a time

# the first schema these statements are right for
use constant SCHEMA_MIN => 11;

# 128 random bits from the kernel, as 32 lowercase hex digits
sub token {
	open(my $r, '<:raw', '/dev/urandom')
	    or fail_with("/dev/urandom: $!", 74);
	read($r, my $raw, 16) == 16
	    or fail_with('cannot read /dev/urandom', 74);
	return unpack('H*', $raw);
}

# The confirming node named: [host, socket, port] for connect_db(), and
# its name in messages; () if none is.
sub confirm_node {
	my ($o) = @_;
	my $env = sub { my $v = $ENV{$_[0]}; defined $v && $v ne '' ? $v :
	    $_[1] };
	my ($host, $sock) = ($o->{'confirm-host'}, $o->{'confirm-socket'});
	return () unless defined $host || defined $sock;
	if (defined $host && $host ne 'localhost') {
		my $port = $o->{'confirm-port'} //
		    $env->('MYSQL_TCP_PORT', '3306');
		return ([$host, undef, $port], "$host:$port");
	}
	$sock //= $env->('MYSQL_UNIX_PORT', '/run/mysqld/mysqld.sock');
	return ([undef, $sock, undef], $sock);
}

# A session on the confirming node, checked before the claim: a member of
# the primary component, of the claim's node's cluster, not that node
# (told apart by wsrep_gcomm_uuid, not by a host name: containers share
# those); undef where none is named, or db's server is not a Galera node
# (there is no cluster to lose a claim).
sub confirming {
	my ($db, $o) = @_;
	my ($node, $name) = confirm_node($o);
	return undef unless $node && $db->{private_mq_galera};
	$o->{'confirm-name'} = $name;
	my $refuse = sub {
		fail_with("confirming node $name cannot be used: $_[0]", 69);
	};
	my $t = $o->{table};
	my @me = run($db, SQL_NODE, $t)->fetchrow_array;
	# the same user, password and database
	my %c = (%$o, database => $db->{private_mq_database});
	my ($other, @it);
	eval {
		$other = connect_db(\%c, SCHEMA_MIN, $o->{'lock-wait'}, $node);
		@it = run($other, SQL_NODE, $t)->fetchrow_array;
		1;
	} or $refuse->((error_text($@))[0]);
	$refuse->('not a Galera node') unless defined $it[0];
	$refuse->("it is the claim's own node (wsrep_gcomm_uuid $it[0])")
	    if defined $me[0] && $it[0] eq $me[0];
	$refuse->("a node of another cluster (wsrep_cluster_state_uuid " .
	    ($it[1] // 'NULL') . ", not " . ($me[1] // 'NULL') . ")")
	    if ($it[1] // '') ne ($me[1] // '');
	$refuse->("not ready ($it[2])") if defined $it[2];
	return $other;
}

# Whether the confirming node shows job id leased with token, read once
# it applied what the cluster committed before the read.
sub confirmed {
	my ($other, $o, $id, $token) = @_;
	my $t = $o->{table};
	my $ids = eval {
		run($other, SQL_SYNC_WAIT, $t);
		run($other, SQL_SEEN, $t, $token, I($id))->fetchall_arrayref;
	} or fail_with("cannot read the claim of job $id on the confirming " .
	    "node $o->{'confirm-name'}: " . (error_text($@))[0], 69);
	return grep { $_->[0] == $id } @$ids;
}

# The lease holder as mq writes it (mq-sql(7), CLAIMING A JOB): the host
# name, its first 199 bytes, each byte outside '!' to '~' as '?'
# (leased_by is ASCII: a UTF-8 host name made every claim fail with
# 1366), then ':' and the process id; 255 characters at most.
sub leased_by {
	my $host = eval { hostname() } // 'unknown';
	utf8::encode($host) if utf8::is_utf8($host);
	$host = substr($host, 0, 199);
	$host =~ s/[^\x21-\x7e]/?/g;
	return substr("$host:$$", 0, 255);
}

# (id, attempt, payload) of the job claimed with token, or ()
sub claim {
	my ($db, $o, $token) = @_;
	my ($t, $q) = ($o->{table}, $o->{queue});
	my $lease = I(int($o->{lease} * 1e6 + 0.5));
	my $worker = leased_by();
	if ($o->{claim} eq 'skip-locked') {
		return transaction($db, sub {
			my @row = run($db, SQL_CLAIM_SELECT, $t, $q, $q, $q,
			    I(1))->fetchrow_array or return ();
			my $n = run($db, SQL_CLAIM_LEASE, $t, $token, $lease,
			    $worker, I($row[0]))->rows;
			fail_with("claim leased $n of 1 rows") if $n != 1;
			# attempts as read before the claim's + 1
			return ($row[0], $row[3] + 1, $row[4]);
		});
	}
	my $n = transaction($db, sub {
		# its own statement: the UPDATE may not read its own table
		my ($due) = run($db, SQL_ANY_DUE, $t, $q)->fetchrow_array;
		return 0 unless $due;
		return run($db, SQL_CLAIM_UPDATE, $t, $token, $lease, $worker,
		    $q, $q, I(1))->rows;
	}, 1);
	return () if $n == 0;
	# committed: the job is ours until the lease ends
	my @row = run($db, SQL_CLAIM_READ, $t, $q, $token)->fetchrow_array;
	return ($row[0], $row[3], $row[4]);
}

sub lost {
	fail_with("job $_[0]: lease lost (the job was requeued and claimed " .
	    'again, or finished): nothing changed', 2);
}

# sql for n ids: one ? per id in its IN (?) (mq-sql(7), CONVENTIONS)
sub listed {
	my ($sql, $n) = @_;
	my $list = join ', ', ('?') x $n;
	$sql =~ s/IN \(\?\)/IN ($list)/;
	return $sql;
}

# sql for n pairs: one (?, ?) per pair in its IN ((?, ?))
sub paired {
	my ($sql, $n) = @_;
	my $list = join ', ', ('(?, ?)') x $n;
	$sql =~ s/IN \(\(\?, \?\)\)/IN ($list)/;
	return $sql;
}

# The edges of job id met: all of them (done 1), or those of the
# dependents that run anyway (done 0: it is dead); a dependent whose last
# shard this empties is due now (mq-sql(7), DEPENDENCIES).
sub meet {
	my ($db, $t, $id, $done) = @_;
	run($db, SQL_MEET_SHARDS, $t, I($done), I($id));
	run($db, SQL_MEET_RELEASE, $t, I($done), I($id))
	    if run($db, SQL_MEET_PARENTS, $t, I($done), I($id))->rows > 0;
	run($db, SQL_MEET_MARK, $t, I($done), I($id));
}

# After the burial and its count, in its transaction: the death of job
# id applied to its dependents, and the deaths that cancels to theirs (a
# list, not a recursion).
sub dead_with_dependents {
	my ($db, $t, $id) = @_;
	my @todo = ($id);
	for (my $i = 0; $i < @todo; $i++) {
		my $j = $todo[$i];
		my ($has, $dead) = run($db, SQL_HAS_DEPENDENTS, $t, I($j))
		    ->fetchrow_array;
		next unless defined $has;
		meet($db, $t, $j, $dead ? 0 : 1);
		next unless $dead;
		my ($n, $last) = (0, 0);
		do {
			# one parent: each dependent in one row, and the
			# cursor its last one
			my @doomed = map { $_->[0] } @{run($db, SQL_DOOMED, $t,
			    I($j), I($j), I($last), I(0),
			    I($j))->fetchall_arrayref};
			$n = @doomed;
			if ($n > 0) {
				my $got = run($db, paired(SQL_CANCEL, $n), $t,
				    I(0), I(0), map { (I($j), I($_)) } @doomed)->rows;
				fail_with("cannot cancel the dependents of job " .
				    "$j: $got of $n changed") if $got != $n;
				run($db, listed(SQL_COUNT_FINISHED, $n), $t, undef,
				    I(SLOT_BASE), I(1), I(1), map { I($_) } @doomed);
				push @todo, @doomed;
				$last = $doomed[-1];
			}
		} while ($n == DOOMED_MAX);
	}
}

sub ack {
	my ($db, $o, $id, $token) = @_;
	my $t = $o->{table};
	transaction($db, sub {
		# a job without dependents (nearly all): one UPDATE
		if (run($db, SQL_ACK_CHILDLESS, $t, I($id), $token)->rows == 1) {
			run($db, SQL_COUNT_FINISHED, $t, undef,
			    I(SLOT_BASE), I(1), I(1), I($id));
			return;
		}
		my $n = run($db, SQL_ACK, $t, I($id), $token)->rows;
		lost($id) if $n != 1;
		# the job and its count commit together: mq stats stays exact
		run($db, SQL_COUNT_FINISHED, $t, undef,
		    I(SLOT_BASE), I(1), I(1), I($id));
		# it has dependents: those it was the last parent of are due
		meet($db, $t, $id, 1);
	});
}

# mq's: 10 s doubling per attempt, at most 1 h, times [0.75, 1.25)
sub backoff_us {
	my $n = $_[0] > 1 ? $_[0] - 1 : 0;
	my $base = 10000000 * 2**($n > 9 ? 9 : $n);
	$base = 3600000000 if $base > 3600000000;
	return int($base * (0.75 + rand(0.5)));
}

sub fail_job {
	my ($db, $o, $id, $token, $error) = @_;
	my $t = $o->{table};
	$error = substr($error, 0, ERROR_MAX);
	return transaction($db, sub {
		my ($attempts, $max) = run($db, SQL_LOCK, $t, I($id), $token)
		    ->fetchrow_array or lost($id);
		if ($o->{'no-retry'} || $attempts >= $max) {
			run($db, SQL_BURY, $t, $error, I($id));
			run($db, SQL_HISTORY, $t, 'failed', $error, I($id));
			run($db, SQL_COUNT_FINISHED, $t, undef,
			    I(SLOT_BASE), I(1), I(1), I($id));
			dead_with_dependents($db, $t, $id);
			return "dead after attempt $attempts";
		}
		my $delay = defined $o->{'retry-in'} ?
		    int($o->{'retry-in'} * 1e6 + 0.5) : backoff_us($attempts);
		run($db, SQL_RETRY, $t, I($delay), $error, I($id));
		run($db, SQL_HISTORY, $t, 'failed', $error, I($id));
		run($db, SQL_COUNT_EVENT, $t, 'failed', I(SLOT_BASE), undef,
		    undef, I($id));
		return sprintf('due again in %.3fs (after attempt %d)',
		    $delay / 1e6, $attempts);
	});
}

sub extend {
	my ($db, $o, $id, $token) = @_;
	transaction($db, sub {
		# a limited queue's gates first, as a claim writes them: an
		# extend and a claim that counts the lease ended are then in
		# one order (mq-sql(7), EXTENDING A LEASE)
		my ($q, $key, $conc, $per) = run($db, SQL_JOB_LIMITS,
		    $o->{table}, I($id))->fetchrow_array;
		if (defined $q) {
			run($db, SQL_GATE, $o->{table}, $q, '')
			    if defined $conc && $conc >= 1;
			run($db, SQL_GATE, $o->{table}, $q, $key)
			    if defined $per && $per >= 1 && defined $key &&
			    length $key;
		}
		run($db, SQL_LOCK, $o->{table}, I($id), $token)->fetchrow_array
		    or lost($id);
		# no row: the lease expired in a limited queue, whose slot
		# may be another job's (mq-sql(7))
		run($db, SQL_EXTEND, $o->{table},
		    I(int($o->{extend} * 1e6 + 0.5)), I($id))->rows > 0
		    or lost($id);
	});
}

# a variable set to the empty string counts as unset, as for mq
my %confirm = map { my $v = $ENV{'MQ_CONFIRM_' . uc $_};
    defined $v && $v ne '' ? ("confirm-$_" => $v) : () } qw(host port socket);
my %o = options({ claim => 'skip-locked', lease => 300, 'lock-wait' => 50,
    %confirm }, 'claim=s', 'lease=f', 'output=s', 'extend=f', 'fail=s',
    'retry-in=f', 'no-retry', 'wait-file=s', 'lock-wait=i',
    'confirm-host=s', 'confirm-port=s', 'confirm-socket=s');
unless (names_ok(\%o) &&
    $o{claim} =~ /^(skip-locked|update)$/ && $o{lease} > 0 &&
    (!defined $o{extend} || $o{extend} > 0) &&
    $o{'lock-wait'} >= 1 && $o{'lock-wait'} <= 3600) {
	print STDERR "consumer.pl: invalid table, queue, database, claim, " .
	    "lease or lock wait\n";
	exit 64;
}
$o{$_} eq '' and delete $o{$_}
    for grep { defined $o{$_} } qw(confirm-host confirm-port confirm-socket);
if (defined $o{'confirm-port'} && !defined $o{'confirm-host'}) {
	print STDERR "consumer.pl: --confirm-port needs --confirm-host\n";
	exit 64;
}
if (defined $o{'confirm-port'} && ($o{'confirm-port'} !~ /^[0-9]{1,5}\z/ ||
    $o{'confirm-port'} < 1 || $o{'confirm-port'} > 65535)) {
	print STDERR "consumer.pl: --confirm-port takes 1 to 65535\n";
	exit 64;
}
my $status = eval {
	my $db = connect_db(\%o, SCHEMA_MIN, $o{'lock-wait'});
	# Galera, a confirming node named: checked before the claim (one
	# that cannot be used fails with nothing claimed)
	my $other = confirming($db, \%o);
	my $token = token();
	my ($id, $attempt, $payload) = claim($db, \%o, $token);
	unless (defined $id) {
		print STDERR "consumer.pl: queue $o{queue}: nothing to claim\n";
		return 1;
	}
	print STDERR "consumer.pl: claimed job $id, attempt $attempt, " .
	    "receipt $id.$token\n";
	# committed: run only if the confirming node shows the claim
	fail_with("the claim of job $id is not seen on the confirming node " .
	    "($o{'confirm-name'}) once it caught up: the cluster lost it, or " .
	    'the lease was taken back; not run', 3)
	    if $other && !confirmed($other, \%o, $id, $token);
	sleep(0.02) while defined $o{'wait-file'} && !-e $o{'wait-file'};
	extend($db, \%o, $id, $token) if defined $o{extend};
	if (defined $o{fail}) {
		my $what = fail_job($db, \%o, $id, $token, $o{fail});
		print STDERR "consumer.pl: job $id: $what\n";
		return 0;
	}
	my $out = \*STDOUT;
	if (defined $o{output}) {
		open($out, '>:raw', $o{output})
		    or fail_with("$o{output}: $!", 74);
	}
	binmode $out;
	print $out $payload or fail_with("cannot write the payload: $!", 74);
	close($out) or fail_with("cannot write the payload: $!", 74);
	ack($db, \%o, $id, $token);
	print STDERR "consumer.pl: job $id: acked\n";
	0;
};
exit(defined $status ? $status : report('consumer.pl', $@));

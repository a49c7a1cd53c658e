#!/usr/bin/perl
# producer.pl: push one job into mq's table with plain SQL, as mq-sql(7)
# documents it; mq work or mq pop runs it like any other.
#
# usage: producer.pl [--queue Q] [--priority N] [--delay S]
#                    [--max-attempts N] [--dedup KEY] [--every S] [--wake]
#                    [--file F] [connection options]
#
# The payload is the bytes of F, or of standard input, byte for byte.
# Prints the job's id (with --dedup, the live job's id if one holds the
# key). Connection: --socket, --host, --port, --user, --database, --table
# or MQ_SOCKET, MQ_HOST, MQ_PORT, MQ_USER, MQ_DATABASE, MQ_TABLE (default
# mq_jobs), MQ_QUEUE (default "default"); the password from MYSQL_PWD.
# MQ_EXAMPLE_TIME_ZONE sets the session's time zone: it changes nothing.
#
# Debian: apt-get install libdbd-mysql-perl.
use strict;
use warnings;
use DBI qw(:sql_types);
use Getopt::Long qw(GetOptions);

# The statements of mq-sql(7), word for word (t330 checks that they are
# there). `mq_jobs` is the default table: run() puts the one asked for in
# its place.
use constant SQL_ROLLBACK => <<'SQL';
ROLLBACK AND NO CHAIN NO RELEASE
SQL
use constant SQL_SESSION => <<'SQL';
SET SESSION autocommit = 1, SESSION completion_type = 0,
    SESSION sql_mode =
    'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',
    SESSION time_zone = '+00:00', NAMES utf8mb4,
    SESSION innodb_lock_wait_timeout = ?, SESSION lock_wait_timeout = ?,
    SESSION wait_timeout = 28800, SESSION net_read_timeout = 30,
    SESSION net_write_timeout = 60,
    SESSION sql_select_limit = 18446744073709551615,
    SESSION max_join_size = 18446744073709551615,
    SESSION sql_safe_updates = 0, SESSION unique_checks = 1,
    SESSION sql_auto_is_null = 0, SESSION timestamp = DEFAULT,
    SESSION insert_id = 0, SESSION div_precision_increment = 4,
    SESSION optimizer_switch = 'default'
    /*M!100300 , SESSION max_statement_time = 0,
      SESSION idle_transaction_timeout = 0,
      SESSION idle_readonly_transaction_timeout = 0,
      SESSION idle_write_transaction_timeout = 0 */
    /*M!100201 , SESSION check_constraint_checks = 0 */
    /*!80000 , SESSION max_execution_time = 0 */
SQL
use constant SQL_ISOLATION => <<'SQL';
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE
SQL
use constant SQL_DATABASE => <<'SQL';
SELECT DATABASE()
SQL
use constant SQL_DROP_TEMPORARY => <<'SQL';
DROP TEMPORARY TABLE IF EXISTS `mq_jobs`, `mq_jobs_archive`,
  `mq_jobs_queues`, `mq_jobs_counts`, `mq_jobs_history`,
  `mq_jobs_waiters`
SQL
use constant SQL_BINLOG => <<'SQL';
SELECT IF(@@GLOBAL.log_bin AND @@SESSION.sql_log_bin,
          @@SESSION.binlog_format, 'NONE')
SQL
use constant SQL_LOG_ROWS => <<'SQL';
SET SESSION binlog_format = 'ROW'
SQL
use constant SQL_VERSION => <<'SQL';
SELECT TABLE_COMMENT FROM information_schema.TABLES
 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
SQL
use constant SQL_PUSH => <<'SQL';
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?)
SQL
use constant SQL_PUSH_KEY => <<'SQL';
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?)
SQL
use constant SQL_PUSH_EVERY => <<'SQL';
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key, every_us, every_anchor)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
SQL
use constant SQL_LIVE_KEY => <<'SQL';
SELECT id, queue FROM `mq_jobs`
 WHERE dedup_unique = CONCAT(?, '/', ?)
SQL
use constant SQL_WAITERS => <<'SQL';
SELECT ID FROM information_schema.PROCESSLIST
 WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
   AND CAST(INFO AS BINARY) LIKE ? ESCAPE '!'
 ORDER BY TIME DESC, ID LIMIT ?
SQL
use constant SQL_KILL => <<'SQL';
KILL QUERY ?
SQL

# the first schema these statements are right for
use constant SCHEMA_MIN => 8;
use constant RETRIES => 8;	# tries of a transaction that met 1213 or 1205

# An error to report in one line, with the exit status to use.
sub fail_with { die { msg => $_[0], status => $_[1] // 70 } }

sub name_ok { my ($s, $re) = @_; $s =~ $re && $s !~ /^[0-9]+$/ }

# An integer parameter of run(); any other is bytes.
sub I { my $v = 0 + shift; \$v }

# Runs sql for the table with its parameters: I(n) as an integer, the
# rest as bytes (the payload, keys and error texts are binary).
sub run {
	my ($db, $sql, $table, @args) = @_;
	$sql =~ s/`mq_jobs/`$table/g;
	my $st = $db->prepare($sql);
	for my $i (0 .. $#args) {
		my $v = $args[$i];
		$st->bind_param($i + 1, ref $v ? $$v : $v,
		    ref $v ? SQL_BIGINT : SQL_BLOB);
	}
	$st->execute;
	return $st;
}

# fn->() in a transaction (or alone, autocommitted), again after a
# deadlock or a lock wait timeout (a deadlock rolls the transaction back,
# a timeout only its statement: roll back the rest), a bounded number of
# times, with a jittered backoff. fn may fail_with: rolled back.
sub transaction {
	my ($db, $fn, $autocommit) = @_;
	for (my $try = 1;; $try++) {
		my @r = eval {
			$db->begin_work unless $autocommit;
			my @r = $fn->();
			$db->commit unless $autocommit;
			@r;
		};
		return wantarray ? @r : $r[0] unless $@;
		my $e = $@;
		my $code = $db->err // 0;
		eval { $db->rollback } unless $db->{AutoCommit};
		die $e if ref $e || ($code != 1213 && $code != 1205);
		fail_with("gave up after ${\RETRIES} deadlocks or lock wait " .
		    "timeouts: " . $db->errstr, 75) if $try == RETRIES;
		select(undef, undef, undef,
		    (0.005 + rand(0.015)) * 2**($try - 1));
	}
}

# The session mq-sql(7) asks for (THE SESSION), whatever the server's
# globals or the account's init_connect made it: autocommit on (else every
# write is rolled back at disconnect), UTC, sql_mode, READ COMMITTED, the
# limits, the CHECKs off; the database asked for (an init_connect may have
# run USE), mq's tables and not temporary ones that hide them; statement
# logging turned to rows.
sub session {
	my ($db, $o, $lock_wait) = @_;
	my $t = $o->{table};
	my $want = $o->{database} // '';
	run($db, SQL_ROLLBACK, $t);
	run($db, SQL_SESSION, $t, I($lock_wait // 50), I(60));
	run($db, SQL_ISOLATION, $t);
	my ($current) = run($db, SQL_DATABASE, $t)->fetchrow_array;
	# DBI has no select_db: USE, the name checked with the options
	if ($want ne '' && ($current // '') ne $want) {
		$db->do("USE `$want`", { mysql_server_prepare => 0 });
	} elsif ($want eq '' && !defined $current) {
		fail_with('no database selected: give --database or set ' .
		    'MQ_DATABASE', 78);
	}
	run($db, SQL_DROP_TEMPORARY, $t);
	my ($format) = run($db, SQL_BINLOG, $t)->fetchrow_array;
	return if ($format // '') ne 'STATEMENT';
	eval { run($db, SQL_LOG_ROWS, $t) } or fail_with('the server logs ' .
	    'statements (binlog_format=STATEMENT), which InnoDB refuses for ' .
	    'READ COMMITTED transactions, and this account cannot log rows ' .
	    'instead (' . $db->errstr . '): set binlog_format=ROW or MIXED, ' .
	    'or grant BINLOG ADMIN', 78);
}

sub connect_db {
	my ($o) = @_;
	my $dsn = "DBI:mysql:database=" . ($o->{database} // "") . ($o->{socket} ?
	    ";mysql_socket=$o->{socket}" : ";host=" . ($o->{host} //
	    'localhost') . ";port=" . ($o->{port} // 3306));
	# real prepared statements: the server gets the text with its ? and
	# the values apart, bytes as bytes
	my $db = DBI->connect($dsn, $o->{user}, $ENV{MYSQL_PWD} // '',
	    { RaiseError => 1, PrintError => 0, AutoCommit => 1,
	    mysql_server_prepare => 1 });
	session($db, $o);
	my $tz = $ENV{MQ_EXAMPLE_TIME_ZONE};
	run($db, 'SET time_zone = ?', $o->{table}, $tz)
	    if defined $tz && $tz ne '';
	my ($v) = run($db, SQL_VERSION, $o->{table}, $o->{table})
	    ->fetchrow_array;
	# newer schemas only add: these statements stay right there
	fail_with("table '$o->{table}' is not an mq table of schema " .
	    SCHEMA_MIN . " or later: run 'mq init'", 78)
	    unless ($v // '') =~ /^mq schema ([0-9]+)$/ && $1 >= SCHEMA_MIN;
	return $db;
}

# Reports an error (ours or the server's) in one line, and its status.
sub report {
	my ($name, $e) = @_;
	my ($msg, $status) = ref $e ? ($e->{msg}, $e->{status}) : ($e, 70);
	$msg =~ s/\s+$//;
	print STDERR "$name: $msg\n";
	return $status;
}
# [id, existed]: the job's id, and whether a live job held the key
sub push_job {
	my ($db, $o, $payload) = @_;
	my $t = $o->{table};
	my $delay = I(int($o->{delay} * 1e6 + 0.5));
	my @head = ($o->{queue}, I($o->{priority}), I($o->{'max-attempts'}),
	    $delay, $payload);
	my ($sql, @args);
	if (defined $o->{every}) {
		($sql, @args) = (SQL_PUSH_EVERY, @head, $o->{dedup},
		    I(int($o->{every} * 1e6 + 0.5)), $delay);
	} elsif (defined $o->{dedup}) {
		($sql, @args) = (SQL_PUSH_KEY, @head, $o->{dedup});
	} else {
		($sql, @args) = (SQL_PUSH, @head);
	}
	# a duplicate key: the live job's id, unless it finished in between
	# (the key is free again: insert again)
	for (1 .. 3) {
		my $id = eval {
			transaction($db, sub { run($db, $sql, $t, @args) }, 1);
			$db->last_insert_id(undef, undef, undef, undef);
		};
		return ($id, 0) if defined $id;
		die $@ if ref $@ || ($db->err // 0) != 1062 ||
		    !defined $o->{dedup};
		my $queue;
		($id, $queue) = run($db, SQL_LIVE_KEY, $t, $o->{queue},
		    $o->{dedup})->fetchrow_array;
		# a foreign row: its queue name has a '/'
		fail_with("the dedup key is held by job $id, which is not of "
		    . "queue '$o->{queue}'", 70)
		    if defined $id && $queue ne $o->{queue};
		return ($id, 1) if defined $id;
	}
	fail_with('the dedup key is taken and freed too fast: try again', 75);
}

# Optional: mq's waiters find the job within a second anyway. This ends
# the marked sleep of one of them now (mq-sql(7), WAKING WAITERS); seeing
# and ending another user's needs PROCESS and CONNECTION ADMIN.
sub wake {
	my ($db, $o) = @_;
	my $marker = "/* mq-wait `$o->{table}` $o->{queue} */";
	(my $pattern = $marker) =~ s/([_%!])/!$1/g;
	my $ids = run($db, SQL_WAITERS, $o->{table}, "%$pattern%", I(1))
	    ->fetchall_arrayref;
	for my $row (@$ids) {
		eval { run($db, SQL_KILL, $o->{table}, I($row->[0])) };
		# 1094: it ended by itself
		die $@ if $@ && ($db->err // 0) != 1094;
	}
}

my %o = (queue => $ENV{MQ_QUEUE} // 'default', priority => 0, delay => 0,
    'max-attempts' => 10, socket => $ENV{MQ_SOCKET}, host => $ENV{MQ_HOST},
    port => $ENV{MQ_PORT}, user => $ENV{MQ_USER} // $ENV{USER},
    database => $ENV{MQ_DATABASE}, table => $ENV{MQ_TABLE} // 'mq_jobs');
GetOptions(\%o, 'queue=s', 'priority=i', 'delay=f', 'max-attempts=i',
    'dedup=s', 'every=f', 'wake', 'file=s', 'socket=s', 'host=s', 'port=i',
    'user=s', 'database=s', 'table=s') && !@ARGV or exit 64;
unless (name_ok($o{table}, qr/^[A-Za-z0-9_]{1,64}\z/) &&
    name_ok($o{queue}, qr/^[A-Za-z0-9_.-]{1,64}\z/) &&
    # it goes in a USE (and the DSN): letters, digits, _ $ -
    ($o{database} // '') =~ /^[A-Za-z0-9_\$-]{0,64}\z/) {
	print STDERR "producer.pl: invalid table, queue or database name\n";
	exit 64;
}
if ((defined $o{every} && $o{every} < 1) || $o{delay} < 0 ||
    $o{'max-attempts'} < 1) {
	print STDERR "producer.pl: invalid --every, --delay or " .
	    "--max-attempts\n";
	exit 64;
}
my $status = eval {
	my $in;
	if (defined $o{file}) {
		open($in, '<:raw', $o{file}) or fail_with("$o{file}: $!", 74);
	} else {
		$in = \*STDIN;
		binmode $in;
	}
	my $payload = do { local $/; <$in> } // '';
	my $db = connect_db(\%o);
	my ($id, $existed) = push_job($db, \%o, $payload);
	wake($db, \%o) if $o{wake} && !$existed && $o{delay} == 0;
	print "$id\n";
	0;
};
exit(defined $status ? $status : report('producer.pl', $@));

# MqSession.pm: what producer.pl and consumer.pl share: the session
# mq-sql(7) asks for (THE SESSION), the connection and its options, the
# schema check, and the retry of a deadlock or a lock wait timeout. They
# find it in their own directory (FindBin), whatever the current one.
#
# Debian: apt-get install libdbd-mysql-perl.
package MqSession;
use strict;
use warnings;
use DBI qw(:sql_types);
use Exporter qw(import);
use Getopt::Long qw(GetOptions);

our @EXPORT = qw(fail_with I run transaction connect_db report options
    names_ok error_text);

# The statements of mq-sql(7), word for word (t330 checks that they are
# there, in this file and the examples'). `mq_jobs` is the default table:
# run() puts the one asked for in its place.
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
  `mq_jobs_waiters`, `mq_jobs_gates`, `mq_jobs_ticks`,
  `mq_jobs_deps`, `mq_jobs_waits`, `mq_jobs_schedules`,
  `mq_jobs_fired`
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
use constant RETRIES => 8;	# tries of a transaction that met 1213 or 1205

# An error to report in one line, with the exit status to use.
sub fail_with { die { msg => $_[0], status => $_[1] // 70 } }

sub name_ok { my ($s, $re) = @_; $s =~ $re && $s !~ /^[0-9]+$/ }

# An integer parameter of run(); any other is bytes.
sub I { my $v = 0 + shift; \$v }

# Whether the server is a Galera node: 1 or 0 (MySQL: 0, which skips
# what MariaDB alone reads).
use constant GALERA => <<'EOS';
SELECT 0 /*M! + (SELECT COUNT(*)
  FROM information_schema.GLOBAL_VARIABLES
 WHERE VARIABLE_NAME = 'WSREP_ON' AND VARIABLE_VALUE = 'ON') */
EOS

# Runs sql for the table with its parameters: I(n) as an integer, the
# rest as bytes (the payload, keys and error texts are binary).
# On a Galera node, a brute-force abort (another node's write that
# conflicts with the transaction's locks) that lands while the server
# prepares a statement rolls the transaction back and loses its error:
# the statements after it would run outside any transaction, each
# committing by itself, and the COMMIT would commit nothing (mq-sql(7),
# WHAT BREAKS THE CONTRACT). So there, after a prepare that follows
# another statement of a transaction (begin_work: AutoCommit off) and
# before its execute, the server says whether the transaction is still
# open; if not, that is the deadlock it should have reported: error 1213,
# and transaction() runs it again. (Not after the first: it has nothing
# to lose, and with autocommit off the server opens the transaction only
# once a statement runs.)
sub run {
	my ($db, $sql, $table, @args) = @_;
	$sql =~ s/`mq_jobs/`$table/g;
	my $st = $db->prepare($sql);
	still_open($db) if $db->{private_mq_galera} && $db->{private_mq_ran} &&
	    !$db->{AutoCommit};
	for my $i (0 .. $#args) {
		my $v = $args[$i];
		$st->bind_param($i + 1, ref $v ? $$v : $v,
		    ref $v ? SQL_BIGINT : SQL_BLOB);
	}
	$st->execute;
	$db->{private_mq_ran} = 1;
	return $st;
}

# Error 1213 unless the server says the transaction is open (run()).
sub still_open {
	my ($db) = @_;
	# the text protocol: one round trip, and no prepare of its own
	my ($open) = $db->selectrow_array('SELECT @@in_transaction',
	    { mysql_server_prepare => 0 });
	return if $open;
	# dies (RaiseError) with err 1213, as the deadlock would have
	$db->set_err(1213, 'the transaction was rolled back without an ' .
	    'error (a Galera brute-force abort)', '40001');
	die $db->errstr . "\n";
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
			$db->{private_mq_ran} = 0;
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
# logging turned to rows. And whether the server is a Galera node (run()),
# and the database the session uses (private_mq_database).
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
		fail_with('no database selected: give --database, set ' .
		    'MQ_DATABASE or database= in an option file', 78);
	}
	$db->{private_mq_database} = $want ne '' ? $want : $current;
	run($db, SQL_DROP_TEMPORARY, $t);
	($db->{private_mq_galera}) = run($db, GALERA, $t)->fetchrow_array;
	my ($format) = run($db, SQL_BINLOG, $t)->fetchrow_array;
	return if ($format // '') ne 'STATEMENT';
	eval { run($db, SQL_LOG_ROWS, $t) } or fail_with('the server logs ' .
	    'statements (binlog_format=STATEMENT), which InnoDB refuses for ' .
	    'READ COMMITTED transactions, and this account cannot log rows ' .
	    'instead (' . $db->errstr . '): set binlog_format=ROW or MIXED, ' .
	    'or grant BINLOG ADMIN', 78);
}

# mq's exit status for a server's or the client library's error number
# (mq(1), EXIT STATUS)
sub status_of {
	my ($code) = @_;
	$code //= 0;
	return 75 if $code == 1213 || $code == 1205;
	return 69 if ($code >= 2000 && $code < 3000) ||
	    grep { $code == $_ } 1040, 1047, 1053, 1927, 5013, 5014, 5015;
	return 77 if grep { $code == $_ } 1044, 1045, 1142, 1143, 1227;
	return 78 if grep { $code == $_ } 1046, 1049, 1102, 1146, 1054;
	return 65 if $code == 1153;
	return 70;
}

# Connected as mq would be: DBD::mysql hands the option files to
# Connector/C (mysql_read_default_group=mq: the groups [client],
# [client-server], [client-mariadb] and [mq] of the files mq reads, or
# of --defaults-file / MQ_DEFAULTS_FILE alone, mysql_read_default_file),
# and only what the options or the MQ_* variables set goes in the DSN,
# so that it wins over the files. The password: an option file's, else
# MYSQL_PWD (Connector/C reads both). $node, [host, socket, port], names
# another server (a consumer's confirming node): these in the DSN, host
# and port or socket always (not the option files', which name the
# first), and $o->{database} as it is.
sub connect_db {
	my ($o, $schema_min, $lock_wait, $node) = @_;
	my $file = $o->{'defaults-file'};
	if (defined $file) {
		# as mq: a file that cannot be read is an error, not no file
		# (not opened here: a pipe is read once, by Connector/C)
		my $why = !-e $file ? 'No such file or directory' :
		    -d _ ? 'a directory' : !-r _ ? 'Permission denied' : undef;
		fail_with("cannot read option file '$file': $why", 78)
		    if defined $why;
	}
	my @dsn = ('mysql_read_default_group=mq');
	push @dsn, "mysql_read_default_file=$file" if defined $file;
	push @dsn, "database=$o->{database}" if defined $o->{database};
	my ($host, $socket, $port) = $node ? @$node :
	    ($o->{host}, $o->{socket}, $o->{port});
	$host //= 'localhost' if $node;
	push @dsn, "mysql_socket=$socket" if defined $socket;
	push @dsn, "host=$host" if defined $host;
	push @dsn, "port=$port" if defined $port;
	# a ';' would end the value in DBI's DSN
	/^[^=]*=.*;/ and fail_with("a connection setting cannot hold ';' " .
	    "here (DBI's DSN): $_", 78) for @dsn;
	# real prepared statements: the server gets the text with its ? and
	# the values apart, bytes as bytes. The password undef: Connector/C
	# then takes an option file's, else MYSQL_PWD.
	my $db = DBI->connect('DBI:mysql:' . join(';', @dsn), $o->{user},
	    undef, { RaiseError => 0, PrintError => 0, PrintWarn => 0,
	    AutoCommit => 1, mysql_server_prepare => 1 })
	    or fail_with("cannot connect: " . one_line($DBI::errstr) .
	    " (error " . ($DBI::err // 0) . ")", status_of($DBI::err));
	$db->{RaiseError} = 1;
	# the error's number in what RaiseError dies with: report() gives
	# mq's status for it (DBI's own text has none, and a rollback after
	# it clears $DBI::err)
	$db->{HandleError} = sub {
		$_[0] .= " (error ${\$_[1]->err})" if $_[1] && $_[1]->err;
		return 0;
	};
	session($db, $o, $lock_wait);
	my $tz = $ENV{MQ_EXAMPLE_TIME_ZONE};
	run($db, 'SET time_zone = ?', $o->{table}, $tz)
	    if defined $tz && $tz ne '';
	my ($v) = run($db, SQL_VERSION, $o->{table}, $o->{table})
	    ->fetchrow_array;
	# newer schemas only add: these statements stay right there
	fail_with("table '$o->{table}' is not an mq table of schema " .
	    "$schema_min or later: run 'mq init'", 78)
	    unless ($v // '') =~ /^mq schema ([0-9]+)$/ && $1 >= $schema_min;
	return $db;
}

sub one_line { my $s = shift // ''; $s =~ s/\s+/ /g; $s =~ s/ $//; $s }

# An error (ours or the server's): its text in one line, and its status.
sub error_text {
	my ($e) = @_;
	my ($msg, $status) = ref $e ? ($e->{msg}, $e->{status}) : ($e, 70);
	# a statement's error, as DBI raises it: its text and number, mq's
	# status for it, not where in this file it was raised
	if (!ref $e && $e =~ /^DBD::\w+::\w+ \w+ failed: (.*) at \S+ line \d+\.?\s*$/s) {
		$msg = $1;
		$status = status_of($1) if $msg =~ /\(error ([0-9]+)\)$/;
	}
	return (one_line($msg), $status);
}

# Reports an error (ours or the server's) in one line, and its status.
sub report {
	my ($name, $e) = @_;
	my ($msg, $status) = error_text($e);
	print STDERR "$name: $msg\n";
	return $status;
}

# The options: the script's own (their defaults, and GetOptions' specs),
# and those of the connection, from the environment by default; 64 on an
# unknown one.
sub options {
	my ($defaults, @spec) = @_;
	# a variable set to the empty string counts as unset, as for mq
	my $env = sub { my $v = $ENV{$_[0]}; defined $v && $v ne '' ? $v :
	    $_[1] };
	my %o = (queue => $env->('MQ_QUEUE', 'default'), %$defaults,
	    socket => $env->('MQ_SOCKET'), host => $env->('MQ_HOST'),
	    port => $env->('MQ_PORT'), user => $env->('MQ_USER'),
	    database => $env->('MQ_DATABASE'),
	    table => $env->('MQ_TABLE', 'mq_jobs'),
	    'defaults-file' => $env->('MQ_DEFAULTS_FILE'));
	GetOptions(\%o, 'queue=s', @spec, 'socket=s', 'host=s', 'port=i',
	    'user=s', 'database=s', 'table=s', 'defaults-file=s') && !@ARGV
	    or exit 64;
	return %o;
}

# Whether the table, queue and database names are ones mq takes: they end
# up in SQL text.
sub names_ok {
	my ($o) = @_;
	return name_ok($o->{table}, qr/^[A-Za-z0-9_]{1,64}\z/) &&
	    name_ok($o->{queue}, qr/^[A-Za-z0-9_.-]{1,64}\z/) &&
	    # it goes in a USE (and the DSN): letters, digits, _ $ -
	    ($o->{database} // '') =~ /^[A-Za-z0-9_\$-]{0,64}\z/;
}

1;

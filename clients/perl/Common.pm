package Common;
# What the Net::Stomp producer and consumer share: the contract's arguments, connecting,
# JSON lines, stdin control and records (clients/contract.md is the definition).
use strict;
use warnings;
use Time::HiRes qw(gettimeofday);
use IO::Select;
use Net::Stomp;
use Net::Stomp::Frame;
use Getopt::Long ();
use Exporter 'import';

our @EXPORT = qw(now_ns emit fail parse_args read_options parse_url start connect_broker
                 graceful_disconnect wait_receipt on_sigterm write_records tcp_nodelay
                 reconnected presize start_slots slot_poller ready_slots disconnect_slots);

our $CLIENT  = 'net-stomp';

# Integer nanoseconds since the epoch (gettimeofday has microsecond resolution).
sub now_ns { my ($s, $us) = gettimeofday(); return $s * 1000000000 + $us * 1000 }

sub emit {
    my ($event, @kv) = @_;
    my $line = '{"event":"' . $event . '"';
    while (@kv) {
        my ($k, $v) = splice(@kv, 0, 2);
        $line .= ',"' . $k . '":'
          . (ref $v eq 'SCALAR' ? ($$v ? 'true' : 'false')    # \1, \0: JSON booleans
             : $k ne 'id' && $k ne 'role' && $v =~ /^-?\d+\z/ ? $v : '"' . $v . '"');
    }
    print STDOUT $line, "}\n";
}

sub fail {
    my ($code, $msg) = @_;
    $msg =~ s/\s+/ /g;
    $msg =~ s/ \z//;
    print STDERR "error: $msg\n";
    exit $code;
}

# ---------------------------------------------------------------- arguments

# The contract's options (clients/options.yaml): Getopt::Long spec, roles, what --help says.
# The harness checks every value against that table; parse_args checks types, minimums, --id
# and the URL scheme (what the contract tests ask), and what this client cannot do.
my @OPTIONS = (
    ['url=s',             'pc', 'URL',    'stomp://HOST:PORT or stomp+ssl://HOST:PORT (required)'],
    ['destinations=s',    'pc', 'LIST',   'comma-separated queue names (required)'],
    ['count=i',           'p',  'N',      'messages per burst [1000]'],
    ['count=i',           'c',  'N',      'stop after N x bursts messages, 0 = until stopped [1000]'],
    ['size=i',            'pc', 'BYTES',  "body size [6]"],
    ['bursts=i',          'pc', 'B',      'number of bursts [1]'],
    ['persistent',        'p',  '',       'persistent delivery (STOMP persistent:true)'],
    ['rate=f',            'p',  'R',      'messages/s (0 = as fast as possible) [0]'],
    ['duration=f',        'p',  'S',      'seconds per burst instead of --count messages, 0 = off [0]'],
    ['nonce=s',           'p',  'N',      'run nonce stamped on every message (bb_nonce) [0]'],
    ['ack=s',             'c',  'MODE',   'auto | client | client-individual [auto]'],
    ['prefetch=i',        'c',  'N',      'activemq.prefetchSize [1000]'],
    ['window-bytes=i',    'c',  'N',      'send consumer-window-size N (Artemis: bytes, -1 = no limit) instead of activemq.prefetchSize'],
    ['tx-batch=i',        'pc', 'N',      'STOMP transactions of N messages, 0 = none [0]'],
    ['id=s',              'pc', 'ID',     'process id [A-Za-z0-9_.-]{1,64} [p1 / c1]'],
    ['records=s',         'pc', 'PATH',   'write raw records (TSV) at stop'],
    ['connections=i',     'pc', 'N',      'open N connections, each a slot of its own (ids ID.1..ID.N; --records PATH with {id}) [1]'],
    ['gate',              'pc', '',       'take go/stop commands from stdin'],
    ['user=s',            'pc', 'U',      'broker user'],
    ['password=s',        'pc', 'P',      'broker password (or the environment\'s BB_PASSWORD)'],
    ['ca=s',              'pc', 'FILE',   "PEM CA that signed the broker's TLS certificate (stomp+ssl://)"],
    ['cert=s',            'pc', 'FILE',   'PEM client certificate for mutual TLS (with --key)'],
    ['key=s',             'pc', 'FILE',   "the client certificate's PEM private key, unencrypted"],
    ['connect-timeout=f', 'pc', 'S',      'seconds [10]'],
    ['failover=s',        'pc', 'LIST',   "more stomp://HOST:PORT addresses: Net::Stomp's own failover (hosts)"],
    ['version',           'pc', '',       'print versions as JSON'],
    ['help',              'pc', '',       'this text'],
);

sub _for_role { my ($role) = @_; return grep { index($_->[1], substr($role, 0, 1)) >= 0 } @OPTIONS }

sub usage {
    my ($role) = @_;
    my $lines = join '', map {
        (my $name = $_->[0]) =~ s/=.*//;
        sprintf("  %-24s %s\n", "--$name" . ($_->[2] ne '' ? " $_->[2]" : ''), $_->[3]);
    } _for_role($role);
    return "usage: $role.pl --url stomp://HOST:PORT --destinations Q1[,Q2...] [options]\n"
      . "burstbench $role (Perl, Net::Stomp $Net::Stomp::VERSION); see clients/contract.md\n"
      . $lines;
}

sub version_line {
    my $v = sprintf('%vd', $^V);
    return qq({"client":"$CLIENT","library":"Net::Stomp $Net::Stomp::VERSION","runtime":"perl $v"});
}

sub parse_args {
    my ($role, @argv) = @_;
    my $producer = $role eq 'producer';
    my %o = (
        count => 1000, size => 6, bursts => 1, 'tx-batch' => 0, 'connect-timeout' => 10, connections => 1,
        id => ($producer ? 'p1' : 'c1'), gate => 0,
        ($producer ? (persistent => 0, rate => 0, nonce => '0', duration => 0)
                   : (ack => 'auto', prefetch => 1000)),
    );
    my @problems;
    {
        local $SIG{__WARN__} = sub { push @problems, $_[0] };
        Getopt::Long::Configure(qw(no_auto_abbrev no_ignore_case no_bundling prefix_pattern=--));
        Getopt::Long::GetOptionsFromArray(\@argv, \%o, map { $_->[0] } _for_role($role))
          or fail(2, $problems[0] // 'bad arguments');
    }
    fail(2, "unexpected argument '$argv[0]'") if @argv;
    if ($o{help})    { print usage($role); exit 0 }
    if ($o{version}) { print version_line(), "\n"; exit 0 }
    for (qw(url destinations)) { fail(2, "missing required option --$_") unless defined $o{$_} }
    my %min = (count => ($producer ? 1 : 0), size => 1, bursts => 1, 'tx-batch' => 0, prefetch => 1,
               'window-bytes' => -1, connections => 1);
    for (grep { defined $o{$_} } keys %min) {
        fail(2, "--$_ must be an integer >= $min{$_}: $o{$_}") if $o{$_} < $min{$_};
    }
    fail(2, "--id must match [A-Za-z0-9_.-]{1,64}: '$o{id}'") unless $o{id} =~ /^[A-Za-z0-9_.-]{1,64}\z/;
    # the password from the environment keeps it off the process list
    $o{password} //= $ENV{BB_PASSWORD} if defined $o{user};
    fail(2, "--user and --password (or BB_PASSWORD) must be given together")
      if defined $o{user} != defined $o{password};
    fail(2, "--cert and --key must be given together") if defined $o{cert} != defined $o{key};
    for (grep { defined $o{$_} } qw(ca cert key)) {
        fail(2, "--$_: cannot read $o{$_}") unless -r $o{$_};
    }
    $o{dests} = [ split /,/, $o{destinations}, -1 ];
    parse_url(\%o);
    # Net::Stomp speaks TLS through IO::Socket::SSL, which it loads only when it connects
    # (and then retries until the timeout): a missing module is a bad request here, at once.
    if ($o{ssl} && !eval { require IO::Socket::SSL; 1 }) {
        fail(2, "stomp+ssl:// needs the Perl module IO::Socket::SSL, which is not installed "
              . "(Debian: apt-get install libio-socket-ssl-perl; or run ./bench setup)");
    }
    if ($o{connections} > 1) {
        # each slot writes a file of its own: PATH with {id} replaced by the slot's id
        fail(2, "--records must contain {id} with --connections > 1 (each slot writes its own file): "
              . "'$o{records}'") if defined $o{records} && index($o{records}, '{id}') < 0;
        fail(2, "--failover with --connections > 1 is not supported by this client") if $o{hosts};
        # a socket a connection, then stdin/out/err, the records files, Perl's own (core Perl
        # cannot raise the limit: the harness gives its children the hard one)
        my ($need, $limit) = ($o{connections} + 64, _open_files_limit());
        fail(2, "--connections $o{connections} needs about $need file descriptors; the limit is "
              . "$limit (ulimit -n)") if defined $limit && $limit < $need;
    }
    unless ($producer) {
        fail(2, "--ack $o{ack} is unsupported by STOMP (use auto, client or client-individual)")
          unless $o{ack} =~ /^(?:auto|client|client-individual)\z/;
        # ActiveMQ's STOMP commit of individually acked messages re-acks them outside the
        # transaction and the subscription stalls (seen with 6.1.7): not offered.
        fail(2, "--tx-batch with --ack client-individual is unsupported (use client or auto)")
          if $o{'tx-batch'} && $o{ack} eq 'client-individual';
    }
    return \%o;
}

# The soft limit on open files (/proc/self/limits: Linux), undef when unknown or unlimited.
sub _open_files_limit {
    open(my $fh, '<', '/proc/self/limits') or return undef;
    while (<$fh>) { return $1 if /^Max open files\s+(\d+)/ }
    return undef;
}

# --name VALUE / --name=VALUE / --flag from @$argv into %$o; $allowed->{name} is true for an
# option that takes a value, false for a flag. Anything else exits 2 with one line.
sub read_options {
    my ($argv, $allowed, $o) = @_;
    my %seen;
    while (@$argv) {
        my $arg = shift @$argv;
        my ($name, $value);
        if ($arg =~ /^--([a-z][a-z-]*)=(.*)\z/s) { ($name, $value) = ($1, $2) }
        elsif ($arg =~ /^--([a-z][a-z-]*)\z/)   { $name = $1 }
        else { fail(2, "unexpected argument '$arg'") }
        fail(2, "unknown option --$name") unless exists $allowed->{$name};
        fail(2, "option --$name given twice") if $seen{$name}++;
        if ($allowed->{$name}) {
            unless (defined $value) {
                fail(2, "option --$name needs a value") unless @$argv;
                $value = shift @$argv;
            }
            $o->{$name} = $value;
        } else {
            fail(2, "option --$name takes no value") if defined $value;
            $o->{$name} = 1;
        }
    }
}

# stomp[+ssl]://HOST:PORT into (ssl, host, port) (exit 2 naming the option otherwise).
sub _split_url {
    my ($url, $opt) = @_;
    if ($url =~ m{^(stomp|stomp\+ssl)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})/?\z}
        && $3 >= 1 && $3 <= 65535) {
        my ($ssl, $host, $port) = ($1 eq 'stomp+ssl' ? 1 : 0, $2, 0 + $3);
        $host =~ s/^\[(.*)\]\z/$1/;
        return ($ssl, $host, $port);
    }
    fail(2, "$opt must be stomp://HOST:PORT or stomp+ssl://HOST:PORT: '$url'");
}

# --url into ssl, host, port; --failover into the list of Net::Stomp `hosts` (--url first).
sub parse_url {
    my ($o) = @_;
    @$o{qw(ssl host port)} = _split_url($o->{url}, '--url');
    return unless defined $o->{failover};
    my @hosts = ({ hostname => $o->{host}, port => $o->{port}, ssl => $o->{ssl} });
    for my $u (split /,/, $o->{failover}, -1) {
        my ($ssl, $host, $port) = _split_url($u, '--failover');
        fail(2, "--failover addresses must use --url's scheme: '$u'") if $ssl != $o->{ssl};
        push @hosts, { hostname => $host, port => $port, ssl => $ssl };
    }
    $o->{hosts} = \@hosts;
    fail(2, "--failover with --tx-batch is not supported by this client")
      if $o->{'tx-batch'};
}

# ---------------------------------------------------------------- connection

# Net::Stomp 0.61 bugs that lose messages, fixed as narrowly as we could. Each is written up
# with a reproducer in docs/findings.md, and tests/unit/test_stock_clients.py allows exactly these
# two names to be replaced in the stock client. Everything else is Net::Stomp as shipped.
{
    no warnings 'redefine';

    # 1. _read_data appends at offset length($buf || ''): when the buffer holds exactly "0" (a
    #    read boundary right after a body's first byte; our bodies start with "0" below seq
    #    100000) the next read overwrites it, the body shifts by one byte and the next frame is
    #    swallowed by the trailer trim. The library's sub with `//` for `||`.
    #    (docs/findings.md#net-stomp-read-data)
    *Net::Stomp::_read_data = sub {
        my ($self, $timeout) = @_;
        return unless $self->select->can_read($timeout);
        my $len = $self->socket->sysread($self->{_framebuf}, $self->bufsize,
                                         length($self->{_framebuf} // ''));
        if (defined $len && $len > 0) {
            $self->{_framebuf_changed} = 1;
        } else {
            $self->logger->warn("error reading frame: $!") unless defined $len;
            $self->_close_socket;
            $self->{_framebuf} = '';
            delete $self->{_command};
            delete $self->{_headers};
        }
        return $len;
    };

    # 2. Net::Stomp::Frame::as_string writes `$body || ''`: a body "0" goes out empty (with
    #    content-length:1 the broker then reads the frame's NUL as the body). The library's
    #    string, with the "0" put back. (docs/findings.md#net-stomp-zero-body)
    my $as_string = \&Net::Stomp::Frame::as_string;
    *Net::Stomp::Frame::as_string = sub {
        my $s = $as_string->(@_);
        my $body = $_[0]->body;
        return defined $body && $body eq '0' ? substr($s, 0, -1) . "0\0" : $s;
    };
}

# Connect (TCP, then STOMP CONNECT) within --connect-timeout, else exit 3 naming the address.
sub connect_broker {
    my ($o) = @_;
    my $t0 = Time::HiRes::time();
    my $deadline = $t0 + $o->{'connect-timeout'};
    my ($stomp, $why);
    while (1) {
        my $left = $deadline - Time::HiRes::time();
        last if $left <= 0;
        $stomp = eval {
            Net::Stomp->new({
                hostname => $o->{host}, port => $o->{port}, timeout => $left,
                initial_reconnect_attempts => 1, reconnect_attempts => 1, connect_delay => 0,
                ($o->{ssl} ? (ssl => 1, ssl_options => _ssl_options($o)) : ()),
                ($o->{hosts} ? _failover_options($o) : ()),
            });
        };
        last if $stomp;
        ($why = $@ || 'unknown error') =~ s/ at \S+ line \d+.*//s;
        $why =~ s/^Failed to connect: //;
        $why =~ s/; giving up$//;
        my $pause = $deadline - Time::HiRes::time();
        Time::HiRes::sleep($pause < 0.25 ? ($pause > 0 ? $pause : 0) : 0.25);
    }
    fail(3, "cannot connect to $o->{url} within $o->{'connect-timeout'} s: " . ($why // 'timed out'))
      unless $stomp;
    my $left = $deadline - Time::HiRes::time();
    $left = 0.001 if $left < 0.001;
    $stomp->timeout($left);
    my $frame = eval {
        $stomp->connect({ defined $o->{user} ? (login => $o->{user}, passcode => $o->{password}) : () });
    };
    unless ($frame && $frame->command eq 'CONNECTED') {
        my $msg = !$frame ? ($@ ? "connection lost during STOMP CONNECT" : "no CONNECTED frame in time")
                : ($frame->headers->{message} // $frame->body // $frame->command);
        fail(3, "cannot connect to $o->{url}: $msg");
    }
    $stomp->timeout(undef);
    return $stomp;
}

# --failover: Net::Stomp's documented failover. `hosts` in order; after a drop the library
# reconnects inside its next send_frame/receive_frame, trying each host with connect_delay
# (whole seconds) between tries, for `reconnect_attempts` rounds: about --connect-timeout s.
# It sends CONNECT again and re-subscribes by itself.
sub _failover_options {
    my ($o) = @_;
    my @hosts = map { { %$_, ($_->{ssl} ? (ssl_options => _ssl_options({ %$o, host => $_->{hostname} })) : ()) } }
      @{ $o->{hosts} };
    my $rounds = int($o->{'connect-timeout'} / @hosts + 0.999);
    return (hosts => \@hosts, connect_delay => 1, reconnect_attempts => ($rounds < 1 ? 1 : $rounds));
}

sub _ssl_options {
    my ($o) = @_;
    # Always verify, the peer's certificate and its name: against --ca when given, else
    # against the system's trust store.
    return {
        SSL_verify_mode => 1,  # SSL_VERIFY_PEER
        SSL_verifycn_scheme => 'default',
        SSL_verifycn_name => $o->{host},
        ($o->{ca} ? (SSL_ca_file => $o->{ca}) : ()),
        ($o->{cert} ? (SSL_cert_file => $o->{cert}, SSL_key_file => $o->{key}) : ()),
    };
}

# The ready line's socket facts: TCP_NODELAY read back from Net::Stomp's socket, and over
# TLS the version it negotiated (IO::Socket::SSL's get_sslversion: "TLSv1_3").
sub tcp_nodelay {
    my ($stomp) = @_;
    require Socket;
    my $sock = $stomp->socket;
    my @tls = eval { $sock->isa('IO::Socket::SSL') } ? (tls => $sock->get_sslversion) : ();
    my $v = getsockopt($sock, Socket::IPPROTO_TCP(), Socket::TCP_NODELAY());
    return (tcp_nodelay => \0, tcp_nodelay_how => 'unknown', @tls) unless defined $v;
    return (tcp_nodelay => (unpack('i', $v) ? \1 : \0), tcp_nodelay_how => 'getsockopt', @tls);
}

# Wait for the RECEIPT with this id; returns 1, or 0 on timeout / stop. Dies on ERROR or loss;
# with --failover ($FAILOVER) a lost connection returns -1 instead (the library reconnects on
# the next call), and so does a late CONNECTED (see reconnected). $on_message (optional) gets
# any MESSAGE frame that arrives meanwhile.
our $FAILOVER = 0;
our $LATE_CONNECTED;

sub wait_receipt {
    my ($stomp, $rid, $timeout, $on_message, $stopref, $idle) = @_;
    my $deadline = defined $timeout ? Time::HiRes::time() + $timeout : undef;
    while (1) {
        my $wait = 1;
        if (defined $deadline) {
            $wait = $deadline - Time::HiRes::time();
            return 0 if $wait <= 0;
            $wait = 1 if $wait > 1;
        }
        my $f = $stomp->receive_frame({ timeout => $wait });
        if (!$f) {
            unless (defined fileno($stomp->socket)) {
                return -1 if $FAILOVER;
                die "connection to the broker lost\n";
            }
            return 0 if $stopref && $$stopref;
            $idle->() if $idle;
            next;
        }
        my $cmd = $f->command;
        if ($cmd eq 'RECEIPT') {
            return 1 if ($f->headers->{'receipt-id'} // '') eq $rid;
        } elsif ($cmd eq 'ERROR') {
            die 'broker error: ' . ($f->headers->{message} // '') . ' ' . ($f->body // '') . "\n";
        } elsif ($cmd eq 'MESSAGE') {
            $on_message->($f) if $on_message;
        } elsif ($cmd eq 'CONNECTED' && $FAILOVER) {
            # a reconnect whose CONNECTED came late (see reconnected): the receipt asked for
            # on the old connection will never come
            $LATE_CONNECTED = $f;
            return -1;
        }
    }
}

# --failover: a `reconnected` line when the library's session changed since $$seen; returns 1
# then. Net::Stomp keeps the CONNECTED frame's session id in session_id, but that is not a sure
# sign: a reconnect begun by a failed write (an ACK or a SEND to the killed broker) leaves the old
# connection's unread frames in Net::Stomp's buffer, its connect() takes the first of them for
# the answer ("failed to connect" in its log) and session_id keeps the old value; the new
# CONNECTED frame then arrives among the others, and whoever reads it puts it in
# $LATE_CONNECTED. Either sign counts, once per session.
my $reconnects = 0;
my %sessions;

sub reconnected {
    my ($stomp, $id, $seen) = @_;
    $sessions{ $$seen // '' } = 1;
    my $late = $LATE_CONNECTED;
    undef $LATE_CONNECTED;
    my $now = $late ? $late->headers->{session} // '' : $stomp->session_id // '';
    return 0 if $sessions{$now}++;
    $$seen = $now;
    print STDERR "Net::Stomp's reconnect took a frame of the old connection for its CONNECTED; "
      . "the real one came after it\n" if $late;
    emit('reconnected', id => $id, t_ns => now_ns(), n => ++$reconnects);
    return 1;
}

# DISCONNECT with a receipt (Net::Stomp's own disconnect has none), so that everything sent
# before it has been processed when the socket closes.
sub graceful_disconnect {
    my ($stomp, $timeout, $on_message) = @_;
    my $ok = eval {
        $stomp->send_frame(Net::Stomp::Frame->new(
            { command => 'DISCONNECT', headers => { receipt => 'bb-disconnect' } }));
        wait_receipt($stomp, 'bb-disconnect', $timeout // 10, $on_message);
    };
    my $err = $@;
    eval { $stomp->socket->close if $stomp->socket };
    die $err if $err;
    return $ok;
}

# SIGTERM sets the flag. SA_RESTART, so that a write blocked by flow control is not cut short
# (Net::Stomp would take the EINTR for a lost connection); select() still returns early.
# What every client does after parsing its options: SIGTERM sets $$stopref, a broken pipe
# is an error return instead of a signal, stdout unbuffered; then connect.
sub start {
    my ($o, $stopref) = @_;
    prepare($o, $stopref);
    return connect_broker($o);
}

sub prepare {
    my ($o, $stopref) = @_;
    $FAILOVER = $o->{hosts} ? 1 : 0;
    on_sigterm($stopref);
    $SIG{PIPE} = 'IGNORE';
    $| = 1;
}

sub on_sigterm {
    my ($flagref) = @_;
    require POSIX;
    my $act = POSIX::SigAction->new(sub { $$flagref = 1 }, POSIX::SigSet->new, POSIX::SA_RESTART());
    $act->safe(1);    # deferred like %SIG handlers: runs between Perl ops
    POSIX::sigaction(POSIX::SIGTERM(), $act)
      or die "cannot install SIGTERM handler: $!\n";
}

# ---------------------------------------------------------------- --connections N > 1

# Several connections in one process, each a slot that behaves as one process would: a hash
# {id => "ID.i", stomp => its Net::Stomp object, records => its records path}, to which the
# producer and consumer add their own state. The slot being worked on is $SLOT, so that an error
# can name it.
our $SLOT;

# What start does, for N slots: connected one after another, each as one connection is
# (connect_broker: within --connect-timeout, else exit 3), pushed onto @$slots, then given to
# $then (a producer's ready line; a consumer's subscriptions). SIGTERM meanwhile ends it early:
# the slots connected so far stop as usual.
sub start_slots {
    my ($o, $stopref, $slots, $then) = @_;
    prepare($o, $stopref);
    for my $i (1 .. $o->{connections}) {
        last if $$stopref;
        my $id = "$o->{id}.$i";
        my $path = $o->{records};
        $path =~ s/\{id\}/$id/g if defined $path;
        my $s = { id => $id, records => $path };
        $s->{stomp} = connect_broker($o);
        push @$slots, $s;
        $SLOT = $s;
        $then->($s);
    }
}

# Waiting on N connections at once: one select() over their sockets, as IO::Select keeps them.
# IO::Select's own can_read would walk every handle to map the answer back (a Perl loop over N
# per wake-up); ready_slots reads the answer's bits with unpack and index instead, so that Perl
# works for the ready sockets only.
sub slot_poller {
    my @slots = @_;
    my ($sel, @by_fd) = (IO::Select->new);
    for my $s (@slots) {
        my $sock = $s->{stomp}->socket;
        $sel->add($sock);
        $by_fd[ fileno($sock) ] = $s;
    }
    return { select => $sel, by_fd => \@by_fd };
}

# The slots whose sockets have bytes (or an end of file) to read, waiting up to $timeout seconds
# for one; none after SIGTERM (which interrupts select). A slot's Net::Stomp object may hold a
# whole frame in its buffer that select cannot see: the caller reads each slot it serves until
# receive_frame({timeout => 0}) returns nothing (it takes a buffered frame before it reads, and
# reads without waiting), or serves it again next time.
sub ready_slots {
    my ($p, $timeout) = @_;
    my $n = select(my $bits = $p->{select}->bits, undef, undef, $timeout);
    return () unless $n > 0;
    $bits = unpack('b*', $bits);
    my ($i, @ready) = (-1);
    push @ready, $p->{by_fd}[$i] while ($i = index($bits, '1', $i + 1)) >= 0;
    return @ready;
}

# graceful_disconnect for every slot: all the DISCONNECT frames first, then the receipts, so that
# N connections close in about one round trip, not N. $on_message->($slot, $frame) gets what
# arrives meanwhile. $slot->{bye} says whether its DISCONNECT was confirmed. The receipts share
# $timeout, each with at least 0.1 s (they are in flight together: a late one is one the broker
# is not sending).
sub disconnect_slots {
    my ($slots, $timeout, $on_message) = @_;
    for my $s (@$slots) {
        $SLOT = $s;
        $s->{stomp}->send_frame(Net::Stomp::Frame->new(
            { command => 'DISCONNECT', headers => { receipt => 'bb-disconnect' } }));
    }
    my $deadline = Time::HiRes::time() + ($timeout // 10);
    for my $s (@$slots) {
        $SLOT = $s;
        my $left = $deadline - Time::HiRes::time();
        $s->{bye} = wait_receipt($s->{stomp}, 'bb-disconnect', $left > 0.1 ? $left : 0.1,
                                 $on_message ? sub { $on_message->($s, $_[0]) } : undef);
        $s->{stomp}->socket->close;
    }
}

# ---------------------------------------------------------------- stdin control

{
    package StdinLines;
    # Non-blocking line reader on STDIN (sysread + select), so that SIGTERM and the broker
    # socket are never starved by a blocked read.
    sub new { my $c = shift; return bless { buf => '', eof => 0, lines => [] }, $c }
    sub fh  { return \*STDIN }
    # Read what is available now (or wait up to $timeout seconds). Returns the lines read.
    sub poll {
        my ($self, $timeout) = @_;
        return () if $self->{eof} && !@{ $self->{lines} };
        unless ($self->{eof}) {
            my $rin = '';
            vec($rin, fileno(STDIN), 1) = 1;
            my $n = select(my $rout = $rin, undef, undef, $timeout);
            if ($n > 0) {
                my $got = sysread(STDIN, $self->{buf}, 65536, length $self->{buf});
                if (!$got) {
                    $self->{eof} = 1 unless !defined $got && ($!{EINTR} || $!{EAGAIN});
                }
                while ($self->{buf} =~ s/^([^\n]*)\n//) {
                    (my $l = $1) =~ s/^\s+|\s+\z//g;
                    push @{ $self->{lines} }, $l;
                }
                if ($self->{eof} && length $self->{buf}) {
                    (my $l = $self->{buf}) =~ s/^\s+|\s+\z//g;
                    push @{ $self->{lines} }, $l;
                    $self->{buf} = '';
                }
            }
        }
        my @l = @{ $self->{lines} };
        @{ $self->{lines} } = ();
        return @l;
    }
    sub eof { return $_[0]{eof} }
}

# ---------------------------------------------------------------- records

# Empties the string $$ref with memory for $bytes bytes (at most $max, 256 MiB by default)
# that is already touched: fresh memory in the timed messages is page faults, 3-6 µs each on
# the bench's VM, and assigning '' keeps a string's memory.
sub presize {
    my ($ref, $bytes, $max) = @_;
    $max //= 256 << 20;
    $$ref = "\0" x ($bytes < $max ? $bytes : $max);
    $$ref = '';
}

# The records file: the header line, then $data: a string's ref, or a sub that returns the next
# piece of lines and undef at the end.
sub write_records {
    my ($path, $header, $data) = @_;
    return unless defined $path;
    my $failed = "cannot write records to $path";
    open(my $fh, '>', $path) or die "$failed: $!\n";
    print $fh $header, "\n" or die "$failed: $!\n";
    if (ref $data eq 'CODE') {
        while (defined(my $piece = $data->())) { print $fh $piece or die "$failed: $!\n" }
    } else {
        print $fh $$data or die "$failed: $!\n";
    }
    close($fh) or die "$failed: $!\n";
}

1;

package Connect;
# Connecting as the contract asks (clients/contract.md): within --connect-timeout or exit 3,
# TLS, receipts, a DISCONNECT with a receipt, SIGTERM, and a consumer's subscriptions.
use strict;
use warnings;
use Time::HiRes ();
use Net::Stomp;
use Net::Stomp::Frame;
use Exporter 'import';
use Common;
use Failover ();

our @EXPORT = qw(start prepare connect_broker graceful_disconnect wait_receipt on_sigterm
                 tcp_nodelay subscribe_all subscribed);

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
                ($o->{ssl} ? (ssl => 1, ssl_options => ssl_options($o)) : ()),
                ($o->{hosts} ? Failover::options($o) : ()),
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

# IO::Socket::SSL's options for the broker at $o->{host}.
sub ssl_options {
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
# with --failover a lost connection returns -1 instead (the library reconnects on the next
# call), and so does a late CONNECTED (see Failover::reconnected). $on_message (optional) gets
# any MESSAGE frame that arrives meanwhile.

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
                return -1 if $Failover::ON;
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
        } elsif ($cmd eq 'CONNECTED' && $Failover::ON) {
            # a reconnect whose CONNECTED came late (see Failover::reconnected): the receipt
            # asked for on the old connection will never come
            $Failover::LATE_CONNECTED = $f;
            return -1;
        }
    }
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
    $Failover::ON = $o->{hosts} ? 1 : 0;
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

# A consumer's SUBSCRIBE to every destination of $o in ack mode $ack, the last with a receipt
# (subscribed awaits it).
sub subscribe_all {
    my ($stomp, $o, $id, $ack) = @_;
    my $n = @{ $o->{dests} };
    for my $i (0 .. $n - 1) {
        $stomp->subscribe({
            destination => "/queue/$o->{dests}[$i]", id => "bb-sub-$i", ack => $ack,
            (defined $o->{'window-bytes'} ? ('consumer-window-size' => $o->{'window-bytes'})
                                           : ('activemq.prefetchSize' => $o->{prefetch})),
            ($i == $n - 1 ? (receipt => "bb-$id-subscribed") : ()),
        });
    }
}

# The receipt of subscribe_all, awaited up to --connect-timeout ($on_message gets what arrives
# first); then the ready line.
sub subscribed {
    my ($stomp, $o, $id, $on_message) = @_;
    wait_receipt($stomp, "bb-$id-subscribed", $o->{'connect-timeout'}, $on_message)
      or die "no receipt for SUBSCRIBE\n";
    emit('ready', id => $id, role => 'consumer', tcp_nodelay($stomp));
}

1;

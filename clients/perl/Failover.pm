package Failover;
# --failover (clients/contract.md, "Failover") with Net::Stomp's documented failover: `hosts` in
# order; after a drop the library reconnects inside its next send_frame/receive_frame, trying
# each host with connect_delay (whole seconds) between tries, for `reconnect_attempts` rounds:
# about --connect-timeout s. It sends CONNECT again and re-subscribes by itself. What is left to
# the programs: knowing that it happened (reconnected), a producer's burst sent again whole, a
# consumer forgetting what it had not acknowledged.
use strict;
use warnings;

our $ON = 0;            # --failover was given (Common::prepare)
our $LATE_CONNECTED;    # a CONNECTED frame read where a receipt or message was awaited

# Net::Stomp's options for `hosts` (the --url then the --failover addresses).
sub options {
    my ($o) = @_;
    my @hosts = map { { %$_, ($_->{ssl} ? (ssl_options => Connect::ssl_options({ %$o, host => $_->{hostname} })) : ()) } }
      @{ $o->{hosts} };
    my $rounds = int($o->{'connect-timeout'} / @hosts + 0.999);
    return (hosts => \@hosts, connect_delay => 1, reconnect_attempts => ($rounds < 1 ? 1 : $rounds));
}

# A `reconnected` line when the library's session changed since $$seen; returns 1 then.
# Net::Stomp keeps the CONNECTED frame's session id in session_id, but that is not a sure sign:
# a reconnect begun by a failed write (an ACK or a SEND to the killed broker) leaves the old
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
    Common::emit('reconnected', id => $id, t_ns => Common::now_ns(), n => ++$reconnects);
    return 1;
}

# A producer's burst after its receipt was awaited (Common::wait_receipt's $got): true when it
# must go again, whole, because the connection that would have confirmed it dropped. A receive
# on a closed connection is what makes Net::Stomp reconnect (it dies if it cannot within its
# reconnect_attempts).
sub burst_again {
    my ($stomp, $id, $session, $got) = @_;
    return 0 unless $ON;
    $stomp->receive_frame({ timeout => 0 }) if $got == -1;
    return reconnected($stomp, $id, $session) || $got == -1;
}

# The broker's ERROR message $m that a reconnect explains, and loses nothing: an ack that raced
# the drop, or a CONNECT that Net::Stomp's reconnect sent on a connection the broker already had
# connected (ActiveMQ's non-fatal "Already connected."; seen once in a clean-clone CI soak).
sub ignorable {
    my ($m) = @_;
    return 0 unless $ON && ($m =~ /\bACK\b/i || $m =~ /^Already connected/i);
    print STDERR "ignoring the broker's error after a reconnect: $m\n";
    return 1;
}

1;

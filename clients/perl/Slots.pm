package Slots;
# --connections N > 1 (clients/contract.md, "Many connections in one process"): several
# connections in one process, each a slot that behaves as one process would: a hash
# {id => "ID.i", stomp => its Net::Stomp object, records => its records path}, to which the
# producer and consumer (ProducerSlots.pm, ConsumerSlots.pm) add their own state. The slot being
# worked on is $SLOT, so that an error can name it.
use strict;
use warnings;
use IO::Select;
use Net::Stomp::Frame;
use Common;
use Connect;
use Exporter 'import';

our @EXPORT = qw(start_slots slot_poller ready_slots disconnect_slots);

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

1;

package Acks;
# A consumer's acknowledgements in the client modes and its transactions (--tx-batch), for the
# one connection of consumer.pl or a slot of ConsumerSlots.pm: $c = { stomp, id, pending
# (subscription -> its last MESSAGE not acknowledged yet), unacked, tx_open, tx_n, tx_seq }.
use strict;
use warnings;
use Net::Stomp::Frame;

# Acknowledge what $c holds, inside a transaction with --tx-batch ($txn: one is begun if none
# is open). With --failover, on a connection that dropped, it forgets instead.
sub flush {
    my ($c, $txn) = @_;
    return unless $c->{unacked};
    my $stomp = $c->{stomp};
    if ($Failover::ON && !($stomp->socket && defined fileno($stomp->socket)
                           && $stomp->socket->connected)) {
        forget($c);
        return;
    }
    if ($txn && !$c->{tx_open}) {
        $c->{tx_seq}++;
        $stomp->send_frame(Net::Stomp::Frame->new(
            { command => 'BEGIN', headers => { transaction => "bb-$c->{id}-tx-$c->{tx_seq}" } }));
        $c->{tx_open} = 1;
    }
    for my $f (values %{ $c->{pending} }) {
        $stomp->ack({ frame => $f, ($txn ? (transaction => "bb-$c->{id}-tx-$c->{tx_seq}") : ()) });
    }
    forget($c);
}

# --failover: what was not acknowledged on a dropped connection is the broker's to redeliver;
# acknowledging it on the new one would be an error. Forget it.
sub forget {
    my ($c) = @_;
    %{ $c->{pending} } = ();
    $c->{unacked} = 0;
}

sub commit {
    my ($c) = @_;
    return unless $c->{tx_open};
    $c->{stomp}->send_frame(Net::Stomp::Frame->new(
        { command => 'COMMIT', headers => { transaction => "bb-$c->{id}-tx-$c->{tx_seq}" } }));
    @$c{qw(tx_open tx_n)} = (0, 0);
}

1;

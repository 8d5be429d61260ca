#!/usr/bin/perl
# burstbench producer (Perl, Net::Stomp). The contract: clients/contract.md.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Common;
use Connect;
use Options;
use Records;
use ProducerSlots ();
use Time::HiRes qw(gettimeofday);
use Compress::Raw::Zlib ();

my $o = parse_args('producer', @ARGV);
my $id = $o->{id};

exit ProducerSlots::run($o) if $o->{connections} > 1;    # N connections: ProducerSlots.pm

my $stop = 0;
my $stomp = start($o, \$stop);
my $count = burst_count($o);
my $duration_ns = int($o->{duration} * 1e9);
my $size  = $o->{size};
my $txn   = $o->{'tx-batch'};
my $rate  = $o->{rate};
my $persistent = $o->{persistent};
my $nonce = $o->{nonce};
my @qdest = map { "/queue/$_" } @{ $o->{dests} };
my $nd = @qdest;
my $filler = $size > 6 ? 'x' x ($size - 6) : '';

my $sent_total = 0;
# The records, written at stop: a line "=BURST" when a burst starts (or starts again), then
# "SEQ\tACTUAL_NS" a message, with "\tSENT_NS" when --rate schedules it (the contract's lines,
# which add --id, the burst and the schedule, are made at stop: four numbers a message made
# into text cost 60 ns more, 28955a4:docs/perf.md)
my $rec = '';
presize(\$rec, $count * $o->{bursts} * 32, 64 << 20) unless $duration_ns;    # lines of ~27 B
my $next_tick = Common::now_ns() + 1000000000;
my ($tx_open, $tx_seq) = (0, 0);
my $unconfirmed;               # a burst sent but not yet confirmed: [burst, sent, first, last]

sub tick {
    my ($t) = @_;
    return if $t < $next_tick;
    emit('tick', id => $id, t_ns => $t, sent => $sent_total);
    $next_tick = $t + 1000000000;
}

sub tx_frame {
    my ($command, %extra) = @_;
    $stomp->send_frame(Net::Stomp::Frame->new(
        { command => $command, headers => { transaction => "bb-$id-tx-$tx_seq", %extra } }));
}

sub print_burst {
    my ($b, $n, $first, $last) = @{ $_[0] };
    emit('burst', id => $id, burst => $b, sent => $n, first_ns => $first, last_ns => $last);
}

# --failover: the session the last burst was confirmed on (a change = Net::Stomp reconnected)
my $session = $stomp->session_id;

# Send burst $b; returns when its last message is confirmed (or on SIGTERM). With --failover,
# a burst whose confirmation the dropped connection took is sent again, whole.
sub run_burst {
    my ($b) = @_;
    while (send_burst($b) eq 'again') {
        print STDERR "burst $b unconfirmed when the connection dropped: sending it again\n";
    }
}

sub send_burst {
    my ($b) = @_;
    my ($first, $last) = (0, 0);
    my $base = $b * $count;
    my $start = Common::now_ns();
    my $ns_per_msg = $rate > 0 ? 1e9 / $rate : 0;
    my $rid = "bb-$id-burst-$b";
    my $end = $duration_ns && !$ns_per_msg ? $start + $duration_ns : 0;    # a timed flood
    my $n = 0;
    my $confirm;                # the frame that carries the receipt was sent
    $rec .= "=$b\n";
    for my $i (0 .. $count - 1) {    # (a C-style loop cost 100 ns more a message)
        last if $stop;
        my $seq = $base + $i;
        my ($s, $us, $now, $sent_ns);
        if ($ns_per_msg) {
            $sent_ns = $start + int($i * $ns_per_msg);
            ($s, $us) = gettimeofday();
            $now = $s * 1000000000 + $us * 1000;
            if ($sent_ns > $now) {
                Time::HiRes::sleep(($sent_ns - $now) / 1e9);
                last if $stop;
                ($s, $us) = gettimeofday();
                $now = $s * 1000000000 + $us * 1000;
            }
        } else {
            ($s, $us) = gettimeofday();
            $sent_ns = $now = $s * 1000000000 + $us * 1000;
        }
        my $final = $i == $count - 1 || ($end && $now >= $end);
        my $body = $size >= 6 ? sprintf('%06d', $seq % 1000000) . $filler
                              : substr(sprintf('%06d', $seq % 1000000), 0, $size);
        my %h = (
            destination => $qdest[$seq % $nd], bb_producer => $id, bb_seq => $seq,
            bb_burst => $b, bb_sent_ns => $sent_ns, bb_nonce => $nonce,
            bb_crc32 => sprintf('%08x', Compress::Raw::Zlib::crc32($body)),
            bytes_message => 1, body => $body,
        );
        $h{persistent} = 'true' if $persistent;
        if ($txn) {
            unless ($tx_open) {
                $tx_seq++;
                tx_frame('BEGIN');
                $tx_open = 1;
            }
            $h{transaction} = "bb-$id-tx-$tx_seq";
        } elsif ($final) {
            $h{receipt} = $rid;
            $confirm = 1;
        }
        $first = $now unless $n;
        $last = $now;
        $stomp->send(\%h);
        $n++;
        $sent_total++;
        $rec .= $ns_per_msg ? "$seq\t$now\t$sent_ns\n" : "$seq\t$now\n";
        if ($txn && ($n % $txn == 0 || $final)) {
            if ($final) {
                tx_frame('COMMIT', receipt => $rid);
                $confirm = 1;
            } else {
                tx_frame('COMMIT');
            }
            $tx_open = 0;
        }
        tick($now) if $now >= $next_tick;
        last if $final;
    }
    return '' unless $n;
    $unconfirmed = [$b, $n, $first, $last];
    return '' unless $confirm;    # stopped mid-burst: the disconnect receipt confirms it
    my $got = wait_receipt($stomp, $rid, undef, undef, \$stop, sub { tick(Common::now_ns()) });
    return 'again' if Failover::burst_again($stomp, $id, \$session, $got);
    if ($got) {
        print_burst($unconfirmed);
        $unconfirmed = undef;
    }
    return '';
}

# ---------------------------------------------------------------- main

sub finish {
    if ($tx_open) {    # stopped inside a transaction: commit what was sent
        tx_frame('COMMIT');
        $tx_open = 0;
    }
    my $confirmed = graceful_disconnect($stomp, 10);
    if ($unconfirmed) {    # a burst cut short by SIGTERM/stop: the DISCONNECT receipt confirms it
        die "no receipt for DISCONNECT: the last burst is unconfirmed\n" unless $confirmed;
        print_burst($unconfirmed);
    }
    write_sent($o->{records}, \$rec, $id);
    emit('done', id => $id, sent => $sent_total);
}

my $rc = eval {
    emit('ready', id => $id, role => 'producer', tcp_nodelay($stomp));
    run_bursts($o, \$stop, \&run_burst, \&tick, \$next_tick);
    finish();
    1;
};
Common::fail(1, $@ || 'failed') unless $rc;
exit 0;

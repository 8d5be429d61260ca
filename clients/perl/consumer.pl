#!/usr/bin/perl
# burstbench consumer (Perl, Net::Stomp). The contract: clients/contract.md.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Common;
use Time::HiRes qw(gettimeofday);
use Compress::Raw::Zlib ();

my $o = parse_args('consumer', @ARGV);
my $id = $o->{id};

my $stop = 0;
my $stomp = start($o, \$stop);
my $session = $stomp->session_id;    # --failover: a change means Net::Stomp reconnected

my $ack   = $o->{ack};
my $txn   = $o->{'tx-batch'};
# Acks can only be part of a transaction when they are sent: with --tx-batch, `auto`
# subscribes in `client` mode and acknowledges (cumulatively) inside the transactions.
my $sub_ack = ($txn && $ack eq 'auto') ? 'client' : $ack;
my $mode = $sub_ack eq 'auto' ? 0 : $sub_ack eq 'client' ? 1 : 2;    # 2 = client-individual
my $ack_every = int(($o->{prefetch} + 1) / 2);
my $target = (!$o->{gate} && $o->{count} > 0) ? $o->{count} * $o->{bursts} : 0;

my ($received, $foreign, $redelivered, $seen) = (0, 0, 0, 0);
my $rec = '';                 # records, written at stop
my %dname;                    # '/queue/x' -> 'x'
my %pending;                  # client mode: subscription -> last un-acked MESSAGE frame
my $unacked = 0;
my ($tx_open, $tx_n, $tx_seq) = (0, 0, 0);
my $now = 0;

sub dest_name {
    my ($d) = @_;
    my $name = $d // '';
    $name =~ s{^/queue/}{};
    $name =~ s/[\t\n]/ /g;
    $dname{ $d // '' } = $name;
    return $name;
}

sub begin_tx {
    $tx_seq++;
    $stomp->send_frame(Net::Stomp::Frame->new(
        { command => 'BEGIN', headers => { transaction => "bb-$id-tx-$tx_seq" } }));
    $tx_open = 1;
}

# --failover: what was not acknowledged on a dropped connection is the broker's to redeliver;
# acknowledging it on the new one would be an error. Forget it.
sub forget_unacked {
    %pending = ();
    $unacked = 0;
}

sub flush_acks {
    return unless $unacked;
    if ($Common::FAILOVER && !($stomp->socket && defined fileno($stomp->socket)
                               && $stomp->socket->connected)) {
        forget_unacked();
        return;
    }
    begin_tx() if $txn && !$tx_open;
    for my $f (values %pending) {
        $stomp->ack({ frame => $f, ($txn ? (transaction => "bb-$id-tx-$tx_seq") : ()) });
    }
    %pending = ();
    $unacked = 0;
}

sub commit_tx {
    return unless $tx_open;
    $stomp->send_frame(Net::Stomp::Frame->new(
        { command => 'COMMIT', headers => { transaction => "bb-$id-tx-$tx_seq" } }));
    $tx_open = 0;
    $tx_n = 0;
}

# A MESSAGE frame (receive_loop): keep what the records need, acknowledge as the mode says. The
# hot path is the harness's cost on top of Net::Stomp's, so it keeps no structure per message but
# appends to two strings: a line of the needed header values with a timestamp and the body's
# length ($heads), and what it keeps of the body ($bodies). Keeping each frame's headers hash
# instead (about 2 KB a message) cost 5-8% of the receive rate in page faults and allocation
# (28955a4:docs/perf.md, "Net::Stomp's receive gap"). What it keeps of a body:
# - up to 256 bytes: the body;
# - a body of --size bytes whose bytes after the 6-digit counter are the contract's filler,
#   compared on arrival (a copy and a memcmp): its first 6 bytes (a length past 256 says which);
# - any other: its CRC-32 and first 6 bytes, the length negated.
# Fresh memory is page faults, 3-6 µs each on the bench's VM, so both strings are sized and
# touched before the consumer says it is ready, for --count x --bursts messages (past that they
# grow as they must). Keeping 1 KiB bodies instead cost 0.28 page faults a message, and their
# CRC-32 on arrival 0.6 µs (28955a4:docs/perf.md, "Kept bodies are page faults", "One CPU"). The
# records, with every body's CRC-32, are made at stop.
my ($heads, $bodies) = ('', '');
my $SIZE = $o->{size};
my $FILL = $SIZE > 256 ? 'x' x ($SIZE - 6) : undef;
my $expected = $o->{count} * $o->{bursts};
# With one queue the record line leaves out the destination header (30-60 ns a message,
# perf/micro/listener-cost.pl): a subscription to a queue (no wildcards, no composite names:
# clients/contract.md) gets only that queue's messages, as the Java consumer records them.
my $one_queue = @{ $o->{dests} } == 1 ? "/queue/$o->{dests}[0]" : '';
presize(\$heads, $expected * 128);    # a line is about 100 bytes
presize(\$bodies, $expected * ($SIZE <= 256 ? $SIZE : 6));

# What the records need of a body: its length, CRC-32 and first 6 bytes.
sub body_facts { (length $_[0], Compress::Raw::Zlib::crc32($_[0]), substr($_[0], 0, 6)) }

sub other_frame {
    my ($f) = @_;
    if ($f->command eq 'ERROR') {
        my $m = $f->headers->{message} // '';
        # an ack that raced the drop, or a CONNECT that Net::Stomp's reconnect sent on a
        # connection the broker already had connected (ActiveMQ's non-fatal "Already
        # connected."; seen once in a clean-clone CI soak): neither loses anything
        if ($Common::FAILOVER && ($m =~ /\bACK\b/i || $m =~ /^Already connected/i)) {
            print STDERR "ignoring the broker's error after a reconnect: $m\n";
            return;
        }
        die 'broker error: ' . ($f->headers->{message} // '') . ' ' . ($f->body // '') . "\n";
    }
    if ($f->command eq 'CONNECTED' && $Common::FAILOVER) {    # a late one: see reconnected
        $Common::LATE_CONNECTED = $f;
        forget_unacked() if reconnected($stomp, $id, \$session);
    }
    # RECEIPTs and anything else: nothing to do
}

# The records from $heads and $bodies: a message without the four bench headers (or whose
# headers do not parse) is foreign; body_ok says whether the body starts with the counter's
# digits.
sub make_records {
    no warnings 'uninitialized';    # a missing header makes the line fail the check: foreign
    my $pos = 0;
    for my $l (split /\n/, $heads) {
        my ($len, $crc, $b6);
        # the body's length is the line's last field (a tab inside a header value only adds
        # fields before it): a kept body's bytes (up to 256) follow in $bodies; a checked one's
        # (past 256) first 6 bytes, the filler after them; a summarised one's (negated) CRC-32
        # and first 6 bytes
        my $tab = rindex($l, "\t");
        my $n = substr($l, $tab + 1);
        substr($l, $tab) = '';
        if ($n > 256) {
            ($len, $crc, $b6) = body_facts(substr($bodies, $pos, 6) . $FILL);
            $pos += 6;
        } elsif ($n >= 0) {
            ($len, $crc, $b6) = body_facts(substr($bodies, $pos, $n));
            $pos += $n;
        } else {
            ($len, $crc, $b6) = (-$n, unpack('N a6', substr($bodies, $pos, 10)));
            $pos += 10;
        }
        my ($t, $p, $sq, $bu, $sn, $rd, @rest) = split /\t/, $l, 10;
        my $de = $one_queue || shift @rest;
        my ($nonce, $hcrc, $more) = @rest;
        my $line = "$p\t$sq\t$bu\t$sn";
        unless (!defined $more && defined $hcrc
                && $line =~ /^[A-Za-z0-9_.-]{1,64}\t(\d{1,18})\t\d{1,18}\t\d{1,19}\z/) {
            $foreign++;
            next;
        }
        my $counter = sprintf('%06d', $1 % 1000000);
        my $ok = $b6 ne '' && index($counter, $b6) == 0 ? 1 : 0;
        my $red = $rd eq 'true' ? 1 : 0;
        $redelivered += $red;
        my $dn = $dname{$de} // dest_name($de);
        $nonce = '-' if $nonce eq '';    # absent (the contract's nonce and CRC-32 are never empty)
        $hcrc = '-' if $hcrc eq '';
        $rec .= sprintf("%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%08x\n",
                        $line, $t, $len, $ok, $red, $dn, $nonce, $hcrc, $crc);
        $received++;
    }
    ($heads, $bodies) = ('', '');
}

my $stdin = $o->{gate} ? StdinLines->new : undef;
my $wait = { timeout => $stdin ? 0.05 : 0.2 };    # receive_frame's, at most (receive_loop)
my $next_tick = 0;
my $next_check = 0;

sub housekeeping {
    my ($t) = @_;
    if ($stdin) {
        for my $l ($stdin->poll(0)) { $stop = 1 if $l eq 'stop' }
        $stop = 1 if $stdin->eof;
    }
    if ($t >= $next_tick) {
        emit('tick', id => $id, t_ns => $t, received => $seen) if $next_tick;
        $next_tick = $t + 1000000000;
    }
    $next_check = $t + 50000000;    # look at stdin and the clock every 50 ms at most
}

# The receive loop: reads frames and handles them until $stop. Given a frame, it handles that
# one alone and returns (on_message, the callback of wait_receipt for a MESSAGE that comes
# while a receipt is awaited). Net::Stomp's receive_frame blocks in select, but for at most
# 50 ms (gated) or 200 ms, so that stdin, SIGTERM (which also interrupts select) and ticks are
# noticed. While frames flow, stdin and the clock are looked at every 50 ms (on the receive
# timestamps), never per message. A MESSAGE frame is handled here, inline, not by a sub called
# for every message. The next frame is read at the loop's end, so that handling a given one
# costs a frame one test (`return if $given`): tested also at the loop's head and where it
# read, it cost about 50 ns more a message (perf/micro/listener-cost.pl runs this sub whole;
# 28955a4:docs/perf.md, "The Perl consumer's loop").
sub receive_loop {
    my ($f) = @_;
    my $given = $f;
    while (1) {
        if ($f) {
            if ($f->command eq 'MESSAGE') {
                # an absent header keeps an empty field; a tab inside a value makes the line
                # too long: either way the record fails its check at stop and the message
                # counts as foreign. At stop an empty bb_nonce or bb_crc32 is written '-', as
                # an absent one: the contract never sends either empty, and telling them apart
                # here (with //) cost 30-60 ns a message (perf/micro/listener-cost.pl). The
                # `no warnings` covers this block: a bare block of its own costs 30-50 ns.
                no warnings 'uninitialized';
                # gettimeofday's one value, the seconds as a double, not its list (about 20 ns
                # less): rounded, exactly the microsecond it read until 2106
                # (tests/unit/test_perl_clock.py)
                $now = int(gettimeofday() * 1e6 + 0.5) * 1000;
                my $h = $f->headers;
                my $body = $f->body;
                my $n = length $body;
                if ($n <= 256) {
                    $bodies .= $body;
                } elsif ($n == $SIZE && substr($body, 6) eq $FILL) {
                    $bodies .= substr($body, 0, 6);    # a length past 256 says so: no marker
                } else {
                    $bodies .= pack('N a6', Compress::Raw::Zlib::crc32($body), $body);
                    $n = -$n;
                }
                # Each line is one string literal: split in two and joined with '.', it
                # compiles to three concatenations and two temporaries (B::Concise), 32-42 ns
                # more a message (an A/B of both forms in one process, 28955a4:docs/perf.md).
                if ($one_queue) {    # every message is the one subscription's: named at stop
                    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t$h->{redelivered}\t$h->{bb_nonce}\t$h->{bb_crc32}\t$n\n";
                } else {
                    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t$h->{redelivered}\t$h->{destination}\t$h->{bb_nonce}\t$h->{bb_crc32}\t$n\n";
                }
                $stop = 1 if defined $h->{bb_seq} && ++$seen == $target;
                if ($mode) {
                    if ($mode == 2) {
                        $stomp->ack({ frame => $f });    # (no transactions: client-individual)
                    } else {
                        $pending{ $h->{subscription} // '' } = $f;
                        flush_acks() if ++$unacked >= $ack_every;
                    }
                    if ($txn && ++$tx_n >= $txn) {
                        flush_acks();
                        commit_tx();
                    }
                }
            } else {
                other_frame($f);
            }
            return if $given;
            housekeeping($now) if $now >= $next_check;
        } else {
            unless (defined fileno($stomp->socket)) {
                die "connection to the broker lost\n" unless $Common::FAILOVER;
                forget_unacked();
            }
            housekeeping(Common::now_ns());
        }
        last if $stop;
        $f = $stomp->receive_frame($wait);    # (--failover: reconnects if needed)
        forget_unacked() if $Common::FAILOVER && reconnected($stomp, $id, \$session);
    }
}

sub on_message { receive_loop($_[0]) }

my $rc = eval {
    my $n = @{ $o->{dests} };
    for my $i (0 .. $n - 1) {
        $stomp->subscribe({
            destination => "/queue/$o->{dests}[$i]", id => "bb-sub-$i", ack => $sub_ack,
            (defined $o->{'window-bytes'} ? ('consumer-window-size' => $o->{'window-bytes'})
                                           : ('activemq.prefetchSize' => $o->{prefetch})),
            ($i == $n - 1 ? (receipt => "bb-$id-subscribed") : ()),
        });
    }
    wait_receipt($stomp, "bb-$id-subscribed", $o->{'connect-timeout'}, \&on_message)
      or die "no receipt for SUBSCRIBE\n";
    emit('ready', id => $id, role => 'consumer', tcp_nodelay($stomp));
    $next_tick = Common::now_ns() + 1000000000;

    receive_loop();

    # Stop: acknowledge what we hold, then DISCONNECT with a receipt. Meanwhile, messages the
    # broker already auto-acknowledged are kept; un-acked ones (client modes) are left to be
    # redelivered to others.
    if ($mode) {
        flush_acks() if $mode == 1;
        commit_tx();
    }
    graceful_disconnect($stomp, 10, $mode ? undef : \&on_message);
    save_records();
    emit('done', id => $id, received => $received, foreign => $foreign,
         redelivered => $redelivered);
    1;
};
unless ($rc) {
    # a dropped connection (without --failover) or the broker's ERROR: what was received is
    # still written, as every client does, then exit 1
    my $err = $@ || 'failed';
    eval { save_records() };
    Common::fail(1, $err);
}
exit 0;

sub save_records {
    make_records();
    write_records($o->{records},
        "#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce"
        . "\tcrc32_header\tcrc32_body", \$rec);
}

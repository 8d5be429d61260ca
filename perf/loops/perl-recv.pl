#!/usr/bin/perl
# Minimal Net::Stomp receive loop (reference for clients/perl): URL QUEUE COUNT [SKIP]
# (mark_ns: when message SKIP, counted from 0, arrived: the end of the warm-up; at_ns: when
# messages 0, EVERY, 2 EVERY... arrived, so that the harness can count what arrived in a span)
use strict; use warnings; use Net::Stomp; use Time::HiRes qw(gettimeofday);
# Net::Stomp 0.61 with the stock client's two bug fixes (clients/perl/Common.pm,
# docs/findings.md): without them a body's leading "0" can be overwritten and a frame lost.
use FindBin; use lib "$FindBin::Bin/../../clients/perl"; use Common ();
my ($url, $queue, $count, $skip) = @ARGV; $skip //= 0;
my ($ssl, $host, $port) = $url =~ m{^stomp(\+ssl)?://([^/:]+):(\d+)/?$} or die "usage: $0 stomp://HOST:PORT QUEUE COUNT [SKIP]\n";
my $stomp = Net::Stomp->new({ hostname => $host, port => $port, ssl => $ssl ? 1 : 0, timeout => 10,
                              initial_reconnect_attempts => 1, reconnect_attempts => 1, connect_delay => 0 });
$stomp->connect({})->command eq 'CONNECTED' or die "not connected\n";
$stomp->timeout(undef);  # as the client: the connect timeout only
# with an id, as the client subscribes: ActiveMQ then puts a subscription header on every MESSAGE
$stomp->subscribe({ destination => "/queue/$queue", id => 'bb-sub-0', ack => 'auto',
                    'activemq.prefetchSize' => 1000 });
my ($n, $t0, $t1, $tm, $foreign, @at) = (0);
my $every = 1000;
# as the client calls it: with a timeout in a hash (without one, Net::Stomp's receive_frame makes
# a hash and calls an accessor for every frame: 1% more CPU a message at 1 KiB, 28955a4:docs/perf.md)
my $wait = { timeout => 0.2 };
# (perf/micro/listener-cost.pl runs this loop whole, as the loop's work)
while ($n < $count) {
    my $f = $stomp->receive_frame($wait);
    unless ($f) {
        die "connection lost\n" unless defined fileno($stomp->socket);
        next;
    }
    next unless $f->command eq 'MESSAGE';
    # the clock read as the client reads it: gettimeofday's one value, rounded to its microsecond
    $t1 = int(gettimeofday() * 1e6 + 0.5) * 1000; $t0 //= $t1;
    # a consumer reads what it received, as the client does: the headers and the body
    my ($h, $body) = ($f->headers, $f->body);
    $foreign++ unless defined $h->{bb_seq} && length $body;
    $tm = $t1 if $n == $skip;
    push @at, $t1 if $n % $every == 0;
    $n++;
}
$stomp->disconnect;
print qq({"count":$n,"first_ns":$t0,"mark_ns":$tm,"last_ns":$t1,"every":$every,"at_ns":[), join(",", @at), qq(]}\n);

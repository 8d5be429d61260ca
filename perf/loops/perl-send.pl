#!/usr/bin/perl
# Minimal Net::Stomp send loop (reference for clients/perl): URL QUEUE COUNT SIZE [SKIP]
# (mark_ns: when message SKIP, counted from 0, was handed to send: the end of the warm-up; at_ns:
# when messages 0, EVERY, 2 EVERY... were, so that the harness can count what was sent in a span)
use strict; use warnings; use Net::Stomp; use Time::HiRes qw(gettimeofday); use Compress::Raw::Zlib ();
use FindBin; use lib "$FindBin::Bin/../../clients/perl"; use Common ();  # the stock client's bug fixes
my ($url, $queue, $count, $size, $skip) = @ARGV; $skip //= 0;
my ($ssl, $host, $port) = $url =~ m{^stomp(\+ssl)?://([^/:]+):(\d+)/?$} or die "usage: $0 stomp://HOST:PORT QUEUE COUNT SIZE [SKIP]\n";
my $stomp = Net::Stomp->new({ hostname => $host, port => $port, ssl => $ssl ? 1 : 0, timeout => 10,
                              initial_reconnect_attempts => 1, reconnect_attempts => 1, connect_delay => 0 });
$stomp->connect({})->command eq 'CONNECTED' or die "not connected\n";
$stomp->timeout(undef);  # as the client: the connect timeout only
my $fill = 'x' x ($size > 6 ? $size - 6 : 0);
my ($t0, $t1, $tm, @at);
my $every = 1000;
for my $i (0 .. $count - 1) {  # the same message the bench sends: 6 headers, counter + 'x'
    my ($s, $us) = gettimeofday();
    $t1 = $s * 1000000000 + $us * 1000;
    $t0 //= $t1;
    $tm = $t1 if $i == $skip;
    push @at, $t1 if $i % $every == 0;
    my $body = substr(sprintf('%06d', $i % 1000000) . $fill, 0, $size);
    my %h = (destination => "/queue/$queue", body => $body, bytes_message => 1, bb_producer => 'loop',
             bb_seq => $i, bb_burst => 0, bb_sent_ns => $t1, bb_nonce => 'loop',
             bb_crc32 => sprintf('%08x', Compress::Raw::Zlib::crc32($body)));
    $h{receipt} = 'last' if $i == $count - 1;
    $stomp->send(\%h);
}
while (my $f = $stomp->receive_frame) { last if $f->command eq 'RECEIPT'; die "error frame\n" if $f->command eq 'ERROR' }
{ my ($s, $us) = gettimeofday(); $t1 = $s * 1000000000 + $us * 1000 }  # confirmed by the broker
$stomp->disconnect;
print qq({"count":$count,"first_ns":$t0,"mark_ns":$tm,"last_ns":$t1,"every":$every,"at_ns":[), join(",", @at), qq(]}\n);

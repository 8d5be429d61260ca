#!/usr/bin/perl
# Minimal Net::Stomp receive loop (reference for clients/perl): URL QUEUE COUNT
use strict; use warnings; use Net::Stomp; use Time::HiRes qw(gettimeofday);
# Net::Stomp 0.61 bug fix (as in clients/perl/Common.pm): it appends at length($buf || ''), so a
# buffer holding just "0" (a body's first byte) is overwritten and the next frame is lost.
no warnings 'redefine';
*Net::Stomp::_read_data = sub {
    my ($self, $timeout) = @_;
    return unless $self->select->can_read($timeout);
    my $len = $self->socket->sysread($self->{_framebuf}, $self->bufsize, length($self->{_framebuf} // ''));
    if (defined $len && $len > 0) { $self->{_framebuf_changed} = 1 }
    else { $self->_close_socket; $self->{_framebuf} = ''; delete @$self{qw(_command _headers)} }
    return $len;
};
my ($url, $queue, $count) = @ARGV;
my ($ssl, $host, $port) = $url =~ m{^stomp(\+ssl)?://([^/:]+):(\d+)/?$} or die "usage: $0 stomp://HOST:PORT QUEUE COUNT\n";
my $stomp = Net::Stomp->new({ hostname => $host, port => $port, ssl => $ssl ? 1 : 0 });
$stomp->connect({})->command eq 'CONNECTED' or die "not connected\n";
$stomp->subscribe({ destination => "/queue/$queue", ack => 'auto', 'activemq.prefetchSize' => 1000 });
my ($n, $t0, $t1) = (0);
while ($n < $count) {
    my $f = $stomp->receive_frame or die "connection lost\n";
    next unless $f->command eq 'MESSAGE';
    my ($s, $us) = gettimeofday(); $t1 = $s * 1000000000 + $us * 1000; $t0 //= $t1;
    $n++;
}
$stomp->disconnect;
print qq({"count":$n,"first_ns":$t0,"last_ns":$t1}\n);

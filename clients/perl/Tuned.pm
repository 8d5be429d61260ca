package Tuned;
# net-stomp-tuned: the Net::Stomp producer and consumer with Net::Stomp's wire path replaced.
# A separately named client (burstbench/clients.py), never a default: `perl -I clients/perl
# -MTuned clients/perl/producer.pl ...` loads this first, and the stock programs run on top.
# A lost connection dies at once here instead of reconnecting (the stock client's
# reconnect_attempts => 1 lets Net::Stomp try once more).
use strict;
use warnings;
use Net::Stomp;
use Net::Stomp::Frame;
use Common ();

$Common::CLIENT = 'net-stomp-tuned';

package Net::Stomp;    ## no critic: this file replaces Net::Stomp's subs on purpose
no warnings 'redefine';

sub _reconnect { die "connection to the broker lost\n" }

# The hot paths, leaner than Net::Stomp 0.61's and with the same wire format. The library
# asks the kernel whether the socket is still connected (getpeername) before every frame
# sent or received, copies the headers and builds a Class::Accessor object per SEND, and
# parses each header line with a regex split. A write error or a closed socket is a lost
# connection here anyway (see _reconnect), so the check is left to the write and the read.

# Write all of $s (IO::Socket::SSL too: its syswrite method).
sub _write_all {
    my ($self, $s) = @_;
    my $sock = $self->{socket} or die "connection to the broker lost\n";
    while (length $s) {
        my $w = $sock->syswrite($s);
        die "connection to the broker lost\n" unless $w;
        substr($s, 0, $w, '');
    }
    return;
}

sub send_frame { $_[0]->_write_all($_[1]->as_string); return }

# SEND from a hash of headers plus `body` (with `bytes_message`: a content-length, and a
# body "0" goes out as "0", unlike Net::Stomp::Frame's `$body || ''`).
sub send {
    my ($self, $conf) = @_;
    my $body = $conf->{body} // '';
    my $frame = "SEND\n";
    while (my ($k, $v) = each %$conf) {
        next if $k eq 'body' || $k eq 'bytes_message';
        $frame .= $k . ':' . ($v // '') . "\n";
    }
    $frame .= 'content-length:' . length($body) . "\n" if $conf->{bytes_message};
    $self->_write_all($frame . "\n" . $body . "\0");
    return 1;
}

# One frame from the buffer, reading as needed; undef when nothing came within the timeout
# (or the socket closed: the caller looks at fileno). STOMP 1.0 header lines are
# "name:value" (ActiveMQ writes no spaces around the colon); the first of a repeated
# header wins, as in Net::Stomp.
sub receive_frame {
    my ($self, $conf) = @_;
    my $timeout = $conf && exists $conf->{timeout} ? $conf->{timeout} : $self->timeout;
    my $buf = \$self->{_framebuf};
    while (1) {
        if (defined $$buf && length $$buf) {
            my $h = $self->{_headers};
            unless ($h) {
                $$buf =~ s/^\n+// if substr($$buf, 0, 1) eq "\n";    # heart-beats, EOLs
                my $end = index($$buf, "\n\n");
                if ($end >= 0) {
                    my @lines = split /\n/, substr($$buf, 0, $end + 2, '');
                    $self->{_command} = shift @lines;
                    $h = $self->{_headers} = {};
                    for my $l (@lines) {
                        my $i = index($l, ':');
                        next if $i < 0;
                        my $k = substr($l, 0, $i);
                        $h->{$k} = substr($l, $i + 1) unless exists $h->{$k};
                    }
                }
            }
            if ($h) {
                my $cl = $h->{'content-length'};
                my $body;
                if ($cl) {
                    if (length($$buf) > $cl) {
                        $body = substr($$buf, 0, $cl, '');
                        $$buf =~ s/^[^\0]*\0\n*//;
                    }
                } else {
                    my $z = index($$buf, "\0");
                    if ($z >= 0) {
                        $body = substr($$buf, 0, $z, '');
                        $$buf =~ s/^\0\n*//;
                    }
                }
                if (defined $body) {
                    delete $self->{_headers};
                    $self->{_framebuf_changed} = 1;
                    return bless { command => delete $self->{_command}, headers => $h,
                                   body => $body }, 'Net::Stomp::Frame';
                }
            }
        }
        return undef unless $self->_read_data($timeout);
    }
}

1;

//! FrameDecoder: every split, hostile prefixes; frame encoding golden bytes.

use super::*;

fn frames_bytes() -> (Vec<u8>, Vec<Vec<u8>>) {
    let payloads: Vec<Vec<u8>> = vec![vec![1, 2, 3], vec![], vec![9; 10], vec![4]];
    let mut stream = Vec::new();
    for p in &payloads {
        stream.extend((p.len() as i32).to_be_bytes());
        stream.extend(p);
    }
    (stream, payloads)
}

fn drain(d: &mut FrameDecoder, out: &mut Vec<Vec<u8>>) {
    while let Some(f) = d.next_frame().unwrap() {
        out.push(f);
    }
}

#[test]
fn every_single_split() {
    let (stream, payloads) = frames_bytes();
    for i in 0..=stream.len() {
        let mut d = FrameDecoder::new();
        let mut out = Vec::new();
        d.push(&stream[..i]);
        drain(&mut d, &mut out);
        d.push(&stream[i..]);
        drain(&mut d, &mut out);
        assert_eq!(out, payloads, "split at {i}");
        assert_eq!(d.buffered(), 0);
    }
}

#[test]
fn every_double_split_and_byte_by_byte() {
    let (stream, payloads) = frames_bytes();
    for i in 0..=stream.len() {
        for j in i..=stream.len() {
            let mut d = FrameDecoder::new();
            let mut out = Vec::new();
            for part in [&stream[..i], &stream[i..j], &stream[j..]] {
                d.push(part);
                drain(&mut d, &mut out);
            }
            assert_eq!(out, payloads, "split at {i},{j}");
        }
    }
    let mut d = FrameDecoder::new();
    let mut out = Vec::new();
    for b in &stream {
        d.push(std::slice::from_ref(b));
        drain(&mut d, &mut out);
    }
    assert_eq!(out, payloads);
}

#[test]
fn oversized_prefix_rejected_before_payload() {
    let mut d = FrameDecoder::with_max_frame_size(16);
    d.push(&[0, 0, 0]);
    assert_eq!(d.next_frame(), Ok(None));
    d.push(&[17]);
    assert_eq!(
        d.next_frame(),
        Err(DecodeError::FrameTooLarge { size: 17, max: 16 })
    );
    assert!(d.check().is_err());
    let mut d = FrameDecoder::new();
    d.push(&[0x7f, 0xff, 0xff, 0xff]);
    assert!(matches!(
        d.next_frame(),
        Err(DecodeError::FrameTooLarge {
            size: 2147483647,
            ..
        })
    ));
    let mut d = FrameDecoder::with_max_frame_size(16);
    d.push(&[0, 0, 0, 16]);
    assert_eq!(d.next_frame(), Ok(None), "exactly max is allowed");
}

#[test]
fn negative_prefix_rejected() {
    let mut d = FrameDecoder::new();
    d.push(&[0xff, 0xff, 0xff, 0xfe, 1, 2]);
    assert_eq!(
        d.next_frame(),
        Err(DecodeError::NegativeFrameLength { size: -2 })
    );
}

#[test]
fn compaction_keeps_data() {
    let mut d = FrameDecoder::new();
    let mut out = Vec::new();
    for k in 0..1000u32 {
        let p = k.to_be_bytes();
        let mut f = 4i32.to_be_bytes().to_vec();
        f.extend(p);
        // Push a frame and a half, so partial data straddles compaction points.
        d.push(&f[..3]);
        drain(&mut d, &mut out);
        d.push(&f[3..]);
        drain(&mut d, &mut out);
    }
    assert_eq!(out.len(), 1000);
    for (k, f) in out.iter().enumerate() {
        assert_eq!(f, &(k as u32).to_be_bytes());
    }
}

#[test]
fn response_frame_decodes_into_a_reused_value_like_a_fresh_decode() {
    use crate::protocol::api::streams_group_heartbeat::{
        StreamsGroupHeartbeatRequest as Req, StreamsGroupHeartbeatResponse, TaskIds,
    };
    let answer = |member: &str, partitions: Vec<i32>| StreamsGroupHeartbeatResponse {
        member_id: member.into(),
        member_epoch: 5,
        active_tasks: Some(vec![TaskIds {
            subtopology_id: "0".into(),
            partitions,
        }]),
        ..Default::default()
    };
    let mut reused = answer("previous-member", vec![9, 8, 7, 6, 5]);
    for (cid, expected) in [answer("m", vec![0, 1]), answer("member-2", Vec::new())]
        .into_iter()
        .enumerate()
    {
        let mut frame = Vec::new();
        encode_response_frame::<Req>(&mut frame, cid as i32, &expected, 1).expect("encode");
        let payload = &frame[4..];
        let (header, fresh) = decode_response_frame::<Req>(payload, 1).expect("fresh");
        let header_into = decode_response_frame_into::<Req>(payload, 1, &mut reused).expect("into");
        assert_eq!(header_into.correlation_id, header.correlation_id);
        assert_eq!(reused, fresh);
        assert_eq!(reused, expected);
    }
    // A version the response does not have is refused before the value is touched.
    let before = reused.clone();
    assert!(decode_response_frame_into::<Req>(&[0; 8], 9, &mut reused).is_err());
    assert_eq!(reused, before);
}

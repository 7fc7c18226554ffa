//! The member id and the process id, drawn from the caller's random source the way Java
//! draws them.

use rand::RngCore;

use crate::protocol::codec::Uuid;

/// Draws a member id the way Java's `Uuid.randomUuid().toString()` looks: URL-safe base64
/// without padding of 16 random bytes (22 characters), redrawn while it contains a `-` (Java
/// redraws ids starting with `-`, which trip up command-line tools; avoiding `-` everywhere
/// is a superset of that).
pub fn generate_member_id<R: RngCore + ?Sized>(rng: &mut R) -> String {
    loop {
        let mut bytes = [0u8; 16];
        rng.fill_bytes(&mut bytes);
        let id = Uuid(bytes).to_string();
        if !id.contains('-') {
            return id;
        }
    }
}

/// A random version-4 UUID in the standard 36-character form, as Java's `UUID.randomUUID()`
/// gives for Kafka Streams' process id.
pub fn random_process_id<R: RngCore + ?Sized>(rng: &mut R) -> String {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
